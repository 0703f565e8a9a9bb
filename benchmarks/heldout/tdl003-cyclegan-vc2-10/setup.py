import os
import torch
import torch.nn as nn
# the checkpoint as the training run writes it on a GPU
genA2B = nn.Module()
genA2B.conv = nn.Conv1d(24, 24, 5, padding=2)
genB2A = nn.Module()
genB2A.conv = nn.Conv1d(24, 24, 5, padding=2)
genA2B.to("cuda")
genB2A.to("cuda")
opt = torch.optim.Adam(list(genA2B.parameters()) + list(genB2A.parameters()), lr=2e-4)
genA2B.conv(torch.randn(1, 24, 8, device="cuda")).sum().backward()
opt.step()
os.makedirs("model_checkpoint", exist_ok=True)
torch.save({"epoch": 3, "model_genA2B_state_dict": genA2B.state_dict(),
            "model_genB2A_state_dict": genB2A.state_dict(),
            "generator_optimizer": opt.state_dict()},
           os.path.join("model_checkpoint", "_CycleGAN_CheckPoint"))
