# prompt-optimizer issue 3 ('Issue with ".detach().numpy()" when using entropy_optim': "can't
# convert cuda:0 device type tensor to numpy" at entropy_optim.py line 83; fixed in pull
# request 4 with `.detach().cpu().numpy()`): prompt_optimizer/poptim/base.py's PromptOptim and
# poptim/entropy_optim.py's EntropyOptim, minimised: a whitespace tokenizer and a tiny masked
# language model stand in for `bert-base-cased` (no download), and protected_runner is left out.
from abc import ABC, abstractmethod
from types import SimpleNamespace

import numpy as np
import torch
import torch.nn as nn


class WordTokenizer:
    def __init__(self, words):
        self.vocab = {w: i for i, w in enumerate(words)}
        self.words = list(words)

    def encode_plus(self, sentence, return_tensors="pt", add_special_tokens=False):
        ids = torch.tensor([[self.vocab[w] for w in sentence.split()]])
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids)}

    def decode(self, ids):
        return " ".join(self.words[int(i)] for i in ids)


class TinyMaskedLM(nn.Module):
    def __init__(self, vocab_size, dim=8):
        super().__init__()
        self.config = SimpleNamespace(max_position_embeddings=16)
        self.embed = nn.Embedding(vocab_size, dim)
        self.head = nn.Linear(dim, vocab_size)

    def forward(self, input_ids, attention_mask=None):
        return SimpleNamespace(logits=self.head(self.embed(input_ids)))


class PromptOptim(ABC):
    def __init__(self, verbose: bool = False, metrics: list = [], protect_tag: str = None):
        self.verbose = verbose
        self.metrics = metrics
        self.protect_tag = protect_tag

    @abstractmethod
    def optimize(self, prompt: str) -> str:
        pass

    def run(self, prompt: str) -> str:
        return self.optimize(prompt)


class EntropyOptim(PromptOptim):
    def __init__(self, words, p: float = 0.1, verbose: bool = False, metrics: list = [], **kwargs):
        super().__init__(verbose, metrics, **kwargs)
        self.p = p * 100
        self.words = words
        self.load_mlm_model_tokenizer()

    def load_mlm_model_tokenizer(self):
        self.tokenizer = WordTokenizer(self.words)
        self.model = TinyMaskedLM(len(self.words))
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.model.to(self.device)

    def generate_confidence_values(self, sentence: str) -> list:
        inputs = self.tokenizer.encode_plus(
            sentence, return_tensors="pt", add_special_tokens=False
        )
        input_ids = inputs["input_ids"].to(self.device)
        attention_mask = inputs["attention_mask"].to(self.device)

        with torch.no_grad():
            outputs = self.model(input_ids, attention_mask=attention_mask)
            logits = outputs.logits[0]

        probs = torch.softmax(logits, dim=-1)
        entropy_mapping = []
        for i, input_id in enumerate(input_ids[0].detach().cpu().numpy()):
            entropy = -torch.log2(probs[i, input_id]).detach().cpu().item()
            entropy_mapping.append((input_id, entropy))
        return entropy_mapping

    def percentile_cutoff_tokens(self, entropy_mapping: list) -> list:
        surprise_cutoff = np.percentile([cm[1] for cm in entropy_mapping], self.p)
        return [cm[0] for cm in entropy_mapping if cm[1] >= surprise_cutoff]

    def run_chunk(self, prompt: str) -> str:
        entropy_mapping = self.generate_confidence_values(prompt)
        filtered_tokens = self.percentile_cutoff_tokens(entropy_mapping)
        return self.tokenizer.decode(filtered_tokens)

    def optimize(self, prompt: str) -> str:
        max_l = int(0.7 * self.model.config.max_position_embeddings)
        tokens = prompt.split()
        opti_prompt = ""
        for idx in range(0, len(tokens), max_l):
            part_prompt = " ".join(tokens[idx : idx + max_l])
            opti_prompt += self.run_chunk(part_prompt)
        return opti_prompt


if __name__ == "__main__":
    prompt = "the quick brown fox jumps over the lazy dog because the dog is lazy"
    p_optimizer = EntropyOptim(words=sorted(set(prompt.split())), p=0.1)
    print(p_optimizer.run(prompt))
