import torch
import torch.nn as nn


class SimpleSeq2Seq(nn.Module):
    def __init__(self, vocab_size=20, embedding_dim=8, decoder_output_dim=8, max_decoding_steps=3):
        super().__init__()
        self._embedder = nn.Embedding(vocab_size, embedding_dim)
        self._encoder = nn.GRU(embedding_dim, decoder_output_dim, batch_first=True)
        self._decoder_cell = nn.LSTMCell(embedding_dim, decoder_output_dim)
        self._output_projection_layer = nn.Linear(decoder_output_dim, vocab_size)
        self._decoder_output_dim = decoder_output_dim
        self._max_decoding_steps = max_decoding_steps

    def forward(self, source_tokens):
        embedded_input = self._embedder(source_tokens)
        batch_size = embedded_input.size(0)
        encoder_outputs, _ = self._encoder(embedded_input)
        final_encoder_output = encoder_outputs[:, -1]
        decoder_hidden = final_encoder_output
        decoder_context = decoder_hidden.new_zeros(batch_size, self._decoder_output_dim)
        last_predictions = source_tokens[:, 0]
        step_logits = []
        for timestep in range(self._max_decoding_steps):
            decoder_input = self._embedder(last_predictions)
            decoder_hidden, decoder_context = self._decoder_cell(decoder_input, (decoder_hidden, decoder_context))
            output_projections = self._output_projection_layer(decoder_hidden)
            step_logits.append(output_projections.unsqueeze(1))
            last_predictions = output_projections.argmax(-1)
        return torch.cat(step_logits, 1)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
model = SimpleSeq2Seq().to(device)
print(model(torch.randint(0, 20, (2, 5), device=device)).shape)
