import argparse
import torch
import torch.nn as nn

device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')


class EncoderCNN(nn.Module):
    def __init__(self, embed_size):
        super(EncoderCNN, self).__init__()
        self.linear = nn.Linear(16, embed_size)

    def forward(self, images):
        return self.linear(images.flatten(1))


class DecoderRNN(nn.Module):
    def __init__(self, embed_size, hidden_size, vocab_size):
        super(DecoderRNN, self).__init__()
        self.lstm = nn.LSTM(embed_size, hidden_size, batch_first=True)
        self.linear = nn.Linear(hidden_size, vocab_size)

    def sample(self, features):
        hiddens, _ = self.lstm(features.unsqueeze(1))
        return self.linear(hiddens.squeeze(1)).argmax(1)


def main(args):
    encoder = EncoderCNN(args.embed_size).eval()
    decoder = DecoderRNN(args.embed_size, args.hidden_size, 10)
    encoder = encoder.to(device)
    decoder = decoder.to(device)

    # Load the trained model parameters
    encoder.load_state_dict(torch.load(args.encoder_path, map_location=device))
    decoder.load_state_dict(torch.load(args.decoder_path, map_location=device))

    image_tensor = torch.randn(1, 16).to(device)
    feature = encoder(image_tensor)
    sampled_ids = decoder.sample(feature)
    print(sampled_ids[0].cpu().numpy())


if __name__ == '__main__':
    parser = argparse.ArgumentParser()
    parser.add_argument('--encoder_path', type=str, default='encoder-5-3000.ckpt')
    parser.add_argument('--decoder_path', type=str, default='decoder-5-3000.ckpt')
    parser.add_argument('--embed_size', type=int, default=8)
    parser.add_argument('--hidden_size', type=int, default=12)
    args = parser.parse_args()
    main(args)
