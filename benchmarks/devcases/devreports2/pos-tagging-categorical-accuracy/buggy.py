# pytorch-pos-tagging pull request 5 ("fix: move torch FloatTensor to device", resolves issue 4:
# "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and
# cpu!"): notebook "2 - Fine-tuning Pretrained Transformers for PoS Tagging"'s
# BERTPoSTagger, categorical_accuracy, train and evaluate, minimised: an embedding layer with a
# `config` stands in for BertModel (no download) and random tag batches, already on the device
# as torchtext's BucketIterator(device=device) gives them, stand in for UDPOS.
from types import SimpleNamespace

import torch
import torch.nn as nn
import torch.optim as optim


class TinyBert(nn.Module):
    def __init__(self, vocab_size=30, hidden_size=16):
        super().__init__()
        self.config = SimpleNamespace(to_dict=lambda: {'hidden_size': hidden_size})
        self.embeddings = nn.Embedding(vocab_size, hidden_size)

    def forward(self, text):
        return (self.embeddings(text),)


class BERTPoSTagger(nn.Module):
    def __init__(self, bert, output_dim, dropout):
        super().__init__()
        self.bert = bert
        embedding_dim = bert.config.to_dict()['hidden_size']
        self.fc = nn.Linear(embedding_dim, output_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, text):
        text = text.permute(1, 0)
        embedded = self.dropout(self.bert(text)[0])
        embedded = embedded.permute(1, 0, 2)
        predictions = self.fc(self.dropout(embedded))
        return predictions


def categorical_accuracy(preds, y, tag_pad_idx):
    """
    Returns accuracy per batch, i.e. if you get 8/10 right, this returns 0.8, NOT 8
    """
    max_preds = preds.argmax(dim = 1, keepdim = True) # get the index of the max probability
    non_pad_elements = (y != tag_pad_idx).nonzero()
    correct = max_preds[non_pad_elements].squeeze(1).eq(y[non_pad_elements])
    return correct.sum() / torch.FloatTensor([y[non_pad_elements].shape[0]])


def train(model, iterator, optimizer, criterion, tag_pad_idx):
    epoch_loss = 0
    epoch_acc = 0
    model.train()
    for batch in iterator:
        text = batch.text
        tags = batch.udtags
        optimizer.zero_grad()
        predictions = model(text)
        predictions = predictions.view(-1, predictions.shape[-1])
        tags = tags.view(-1)
        loss = criterion(predictions, tags)
        acc = categorical_accuracy(predictions, tags, tag_pad_idx)
        loss.backward()
        optimizer.step()
        epoch_loss += loss.item()
        epoch_acc += acc.item()
    return epoch_loss / len(iterator), epoch_acc / len(iterator)


device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')

OUTPUT_DIM = 6
TAG_PAD_IDX = 0
model = BERTPoSTagger(TinyBert(), OUTPUT_DIM, 0.25)
optimizer = optim.Adam(model.parameters(), lr = 5e-5)
criterion = nn.CrossEntropyLoss(ignore_index = TAG_PAD_IDX)
model = model.to(device)
criterion = criterion.to(device)

train_iterator = [SimpleNamespace(text=torch.randint(1, 30, (7, 4), device=device),
                                  udtags=torch.randint(0, OUTPUT_DIM, (7, 4), device=device))
                  for _ in range(2)]
train_loss, train_acc = train(model, train_iterator, optimizer, criterion, TAG_PAD_IDX)
print(f'\tTrain Loss: {train_loss:.3f} | Train Acc: {train_acc*100:.2f}%')
