import torch

device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = torch.nn.Sequential(torch.nn.Linear(10, 32), torch.nn.ReLU(), torch.nn.Linear(32, 3)).to(device)

counts = torch.tensor([50.0, 30.0, 20.0])
weights = counts.sum() / counts
loss_fn = torch.nn.CrossEntropyLoss(weight=weights.to(device))

inputs = torch.randn(8, 10, device=device)
labels = torch.randint(0, 3, (8,), device=device)
model_output = model(inputs)
loss = loss_fn(input=model_output, target=labels)
loss.backward()
print(loss.item())
