"""Writes the released weights as training saved them: state dicts of modules on the GPU."""
from pathlib import Path

import torch
import torch.nn as nn

save_path = Path('work_space/save')
save_path.mkdir(parents=True, exist_ok=True)
model = nn.Sequential(nn.Flatten(), nn.Linear(3 * 8 * 8, 16)).cuda()
head = nn.Linear(16, 10).cuda()
torch.save(model.state_dict(), save_path / 'model_cpu_final.pth')
torch.save(head.state_dict(), save_path / 'head_cpu_final.pth')
