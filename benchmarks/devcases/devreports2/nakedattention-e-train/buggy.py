# NakedAttention issue 1 ("Memory issues caused by += with pytorch graph objects": `e_train +=
# e_batch` builds a graph that grows every batch; fixed with `.detach()`): model_and_script.py,
# minimised: random sequences replace dataplumbing's MNIST (16 steps instead of 28**2), a
# plain accuracy replaces torchmetrics' MulticlassAccuracy, one epoch, no validation split,
# and the report prints the accumulated values themselves.
import torch


class SelfAttentionModel(torch.nn.Module):
  def __init__(self, num_steps, num_channels, num_outputs, **kwargs):
    super().__init__(**kwargs)
    self.K = torch.nn.Parameter((2.0*torch.rand(num_channels, num_channels)-1.0)/num_channels**0.5)
    self.Q = torch.nn.Parameter((2.0*torch.rand(num_channels, num_channels)-1.0)/num_channels**0.5)
    self.V = torch.nn.Parameter((2.0*torch.rand(num_channels, num_channels)-1.0)/num_channels**0.5)
    self.softmax = torch.nn.Softmax(dim=1)
    self.out = torch.nn.Linear(num_steps*num_channels, num_outputs)

  def forward(self, x):
    batch_size, num_steps, num_channels = x.shape
    y = []
    for i in range(batch_size): # Process one sample at a time
      x_i = x[i,:,:]
      x_k_i = torch.matmul(x_i, self.K)
      x_q_i = torch.matmul(x_i, self.Q)
      x_v_i = torch.matmul(x_i, self.V)
      w_i = self.softmax(torch.matmul(x_q_i, x_k_i.T)/num_channels**0.5)
      y_i = torch.matmul(w_i, x_v_i)
      y.append(y_i)
    y = torch.stack(y, axis=0)
    y_flat = y.reshape([ batch_size, num_steps*num_channels ])
    l = self.out(y_flat)
    return l


def accuracy(ps, ys):
  return (ps.argmax(dim=1) == ys).float().mean()


model = SelfAttentionModel(num_steps=16, num_channels=1, num_outputs=10)
probability = torch.nn.Softmax(dim=1)
loss = torch.nn.CrossEntropyLoss()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)

xs_train = torch.rand(32, 16, 1)
ys_train = torch.randint(0, 10, (32,))
dataset_train = torch.utils.data.TensorDataset(xs_train, ys_train)
sampler_train = torch.utils.data.RandomSampler(dataset_train, replacement=True)
loader_train = torch.utils.data.DataLoader(dataset=dataset_train, batch_size=16, sampler=sampler_train, drop_last=True)

for i in range(1):
  model.train()
  e_train = 0.0
  a_train = 0.0
  for xs_batch, ys_batch in iter(loader_train): # Must use `iter` or `enumerate` for efficiency
    ls_batch = model(xs_batch)
    ps_batch = probability(ls_batch) # Model outputs logits that we must convert to probabilities
    e_batch = loss(ls_batch, ys_batch) # CrossEntropyLoss requires logits
    a_batch = accuracy(ps_batch, ys_batch)
    optimizer.zero_grad()
    e_batch.backward()
    optimizer.step()
    e_train += e_batch/len(loader_train) # Accumulate average loss for this epoch
    a_train += a_batch/len(loader_train) # Accumulate average accuracy for this epoch

  print('i:', i, 'e_train:', e_train, 'a_train:', a_train)
