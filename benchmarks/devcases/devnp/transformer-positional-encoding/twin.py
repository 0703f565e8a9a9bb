# wingedsheep/transformer issue 4: main.py PositionalEncoding and LanguageModel, minimised.
import torch
import numpy as np


def get_device():
    return torch.device("cuda" if torch.cuda.is_available() else "cpu")


class TokenEmbedding(torch.nn.Module):
    def __init__(self, embedding_dimension, number_of_tokens):
        super().__init__()
        self.embedding_layer = torch.nn.Embedding(
            num_embeddings=number_of_tokens,
            embedding_dim=embedding_dimension
        )

    def forward(self, x):
        return self.embedding_layer(x)


class PositionalEncoding(torch.nn.Module):
    def __init__(self, embedding_dimension, max_sequence_length):
        super().__init__()
        self.embedding_dimension = embedding_dimension
        self.max_sequence_length = max_sequence_length
        self.positional_encoding = self.create_positional_encoding()

    def create_positional_encoding(self):
        """
        Creates a positional encoding matrix of size (max_sequence_length, embedding_dimension)
        """
        positional_encoding = np.zeros((self.max_sequence_length, self.embedding_dimension))
        for pos in range(self.max_sequence_length):
            for i in range(0, self.embedding_dimension, 2):
                positional_encoding[pos, i] = np.sin(pos / (10000 ** ((2 * i) / self.embedding_dimension)))
                positional_encoding[pos, i + 1] = np.cos(pos / (10000 ** ((2 * (i + 1)) / self.embedding_dimension)))
        return torch.from_numpy(positional_encoding).float().to(get_device())

    def forward(self, x):
        """
        Adds the positional encoding to the token embeddings.
        """
        return x + self.positional_encoding[:x.size(1), :]


class LanguageModel(torch.nn.Module):
    def __init__(self, number_of_tokens, max_sequence_length=512, embedding_dimension=512):
        super().__init__()
        self.token_embedding = TokenEmbedding(embedding_dimension, number_of_tokens)
        self.positional_encoding = PositionalEncoding(embedding_dimension, max_sequence_length)
        self.layer_normalization = torch.nn.LayerNorm(embedding_dimension)
        self.lm_head = torch.nn.Linear(embedding_dimension, number_of_tokens)

    def forward(self, x, mask):
        token_embeddings = self.token_embedding(x)
        positional_encoding = self.positional_encoding(token_embeddings)
        positional_encoding_normalized = self.layer_normalization(positional_encoding)
        return self.lm_head(positional_encoding_normalized)


if __name__ == '__main__':
    model = LanguageModel(number_of_tokens=20, max_sequence_length=16, embedding_dimension=8).to(get_device())
    x = torch.randint(0, 20, (2, 10)).to(get_device())
    mask = torch.ones(2, 10).to(get_device())
    print(model(x, mask).shape)
