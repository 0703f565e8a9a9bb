# barissayil/SentimentAnalysis issue 31 (uncommenting the "choosing device part" of analyze.py,
# device = torch.device("cuda:0" ...) and model = model.to(device), then running it fails with
# "RuntimeError: Expected all tensors to be on the same device, but found at least two devices,
# cuda:0 and cpu! (when checking argument for argument index in method wrapper__index_select)";
# fixed in the new version, 18d1a57, whose classify_sentiment moves the input ids to the device
# with .to(self.device)): analyze.py at 521c0ad with those two lines uncommented, and modeling.py's
# BertForSentimentClassification, minimised: a word-level tokenizer and a one-layer embedding
# encoder stand in for the transformers tokenizer and BertModel (from_pretrained builds a fresh
# model from a small config), a list of sentences stands in for the input() loop.
import torch
import torch.nn as nn
from types import SimpleNamespace


class BertModel(nn.Module):
	def __init__(self, config):
		super().__init__()
		self.embeddings = nn.Embedding(config.vocab_size, config.hidden_size)
		self.layer = nn.Linear(config.hidden_size, config.hidden_size)

	def forward(self, input_ids, attention_mask):
		hidden = torch.tanh(self.layer(self.embeddings(input_ids)))
		hidden = hidden * attention_mask.unsqueeze(-1)
		return SimpleNamespace(last_hidden_state=hidden)


class BertForSentimentClassification(nn.Module):
	def __init__(self, config):
		super().__init__()
		self.bert = BertModel(config)
		#The classification layer that takes the [CLS] representation and outputs the logit
		self.cls_layer = nn.Linear(config.hidden_size, 1)

	@classmethod
	def from_pretrained(cls, model_name_or_path):
		return cls(SimpleNamespace(vocab_size=32, hidden_size=16))

	def forward(self, input_ids, attention_mask):
		#Feed the input to Bert model to obtain outputs
		outputs = self.bert(input_ids=input_ids, attention_mask=attention_mask)
		#Obtain the representations of [CLS] heads
		cls_reps = outputs.last_hidden_state[:, 0]
		logits = self.cls_layer(cls_reps)
		return logits


class AutoTokenizer:
	def __init__(self, vocab):
		self.vocab = vocab

	@classmethod
	def from_pretrained(cls, model_name_or_path):
		words = ['[PAD]', '[CLS]', '[SEP]', '[UNK]', 'this', 'movie', 'is', 'great', 'awful', 'not']
		return cls({w: i for i, w in enumerate(words)})

	def tokenize(self, sentence):
		return sentence.lower().split()

	def convert_tokens_to_ids(self, tokens):
		return [self.vocab.get(t, self.vocab['[UNK]']) for t in tokens]


def classify_sentiment(sentence):
	with torch.no_grad():
		tokens = tokenizer.tokenize(sentence)
		tokens = ['[CLS]'] + tokens + ['[SEP]']
		input_ids = tokenizer.convert_tokens_to_ids(tokens)
		input_ids = torch.tensor(input_ids)
		input_ids = input_ids.unsqueeze(0).to(device)
		attention_mask = (input_ids != 0).long()
		logit = model(input_ids=input_ids, attention_mask=attention_mask)
		prob = torch.sigmoid(logit.unsqueeze(-1))
		prob = prob.item()
		soft_prob = prob > 0.5
		if soft_prob == 1:
			print('Positive with probability {}%.'.format(int(prob*100)))
		else:
			print('Negative with probability {}%.'.format(int(100-prob*100)))

if __name__ == "__main__":

	model_name_or_path = 'barissayil/bert-sentiment-analysis-sst'

	print('Please wait while the analyser is being prepared.')

	#Create the model with the desired transformer model
	model = BertForSentimentClassification.from_pretrained(model_name_or_path)

	device = torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
	model = model.to(device)

	model.eval()

	#Initialize the tokenizer for the desired transformer model
	tokenizer = AutoTokenizer.from_pretrained(model_name_or_path)

	for sentence in ['This movie is great', 'This movie is not great at all']:
		classify_sentiment(sentence)
