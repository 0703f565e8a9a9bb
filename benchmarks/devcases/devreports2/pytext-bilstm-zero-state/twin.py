# pytext pull request 297 ("Fix BiLSTM forward crash when input embedding is on GPU": the zero
# hidden state "allocates the tensor on CPU ... RuntimeError: Input and hidden tensors are not
# at the same device, found input tensor at cuda:0 and hidden tensor at cpu"):
# pytext/models/representations/bilstm.py's BiLSTM with pytext/utils/cuda_utils.py's
# CUDA_ENABLED flag, minimised: a plain class replaces the ConfigBase config and an embedding
# plus a linear decoder stand in for the rest of the model. The sequence lengths stay on the
# CPU, as pack_padded_sequence now requires.
from typing import Optional, Tuple

import torch
import torch.nn as nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence


class cuda_utils:
    CUDA_ENABLED = False


class BiLSTM(nn.Module):
    class Config:
        dropout: float = 0.4
        lstm_dim: int = 32
        num_layers: int = 1
        bidirectional: bool = True

    def __init__(self, config: Config, embed_dim: int, padding_value: float = 0.0) -> None:
        super().__init__()
        self.config = config
        self.padding_value: float = padding_value
        self.dropout = nn.Dropout(config.dropout)
        self.lstm = nn.LSTM(
            embed_dim,
            config.lstm_dim,
            num_layers=config.num_layers,
            bidirectional=config.bidirectional,
        )
        self.representation_dim: int = config.lstm_dim * (2 if config.bidirectional else 1)

    def forward(
        self,
        embedded_tokens: torch.Tensor,
        seq_lengths: torch.Tensor,
        states: Optional[Tuple[torch.Tensor, torch.Tensor]] = None,
    ) -> Tuple[torch.Tensor, Tuple[torch.Tensor, torch.Tensor]]:
        embedded_tokens = self.dropout(embedded_tokens)
        if states is not None:
            states = (
                states[0].transpose(0, 1).contiguous(),
                states[1].transpose(0, 1).contiguous(),
            )
        else:
            # We need to send in a zero state that matches the batch size, because
            # torch.jit tracing currently traces this as constant and therefore
            # locks the traced model into a static batch size.
            state = torch.zeros(
                self.config.num_layers * (2 if self.config.bidirectional else 1),
                seq_lengths.size(0),  # batch size
                self.config.lstm_dim,
                device=torch.cuda.current_device() if cuda_utils.CUDA_ENABLED else None,
            )
            states = (state, state)

        rnn_input = pack_padded_sequence(embedded_tokens, seq_lengths.int(), batch_first=True)
        rep, new_state = self.lstm(rnn_input, states)
        rep, _ = pad_packed_sequence(
            rep,
            padding_value=self.padding_value,
            batch_first=True,
            total_length=embedded_tokens.size(1),
        )
        new_state = (new_state[0].transpose(0, 1), new_state[1].transpose(0, 1))
        return rep, new_state


class DocModel(nn.Module):
    def __init__(self, vocab_size, embed_dim, n_classes):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, embed_dim)
        self.representation = BiLSTM(BiLSTM.Config(), embed_dim)
        self.decoder = nn.Linear(self.representation.representation_dim, n_classes)

    def forward(self, tokens, seq_lengths):
        rep, _ = self.representation(self.embedding(tokens), seq_lengths)
        return self.decoder(rep[:, 0])


if __name__ == "__main__":
    cuda_utils.CUDA_ENABLED = torch.cuda.is_available()
    model = DocModel(vocab_size=20, embed_dim=8, n_classes=3)
    if cuda_utils.CUDA_ENABLED:
        model = model.cuda()
    tokens = torch.randint(0, 20, (3, 5))
    seq_lengths = torch.tensor([5, 4, 2])
    if cuda_utils.CUDA_ENABLED:
        tokens = tokens.cuda()
    logits = model(tokens, seq_lengths)
    print(logits.shape)
