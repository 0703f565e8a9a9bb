# Hamiltonian-Generative-Networks pull request 75 ("move get random sample latent represent
# input to device": "simple bugfix for sampling latent representation when using gpu"):
# hamiltonian_generative_network.py's HGN.get_random_sample with utilities/integrator.py's
# Euler Integrator and utilities/hgn_result.py's HgnResult, minimised: one-convolution
# encoder/transformer/decoder/Hamiltonian networks stand in for the networks package, and the
# networks are moved to the device as load_hgn does.
import torch
import torch.nn as nn

class HgnResult():
    def __init__(self, batch_shape, device):
        self.z_sample = None
        self.q_s = []
        self.p_s = []
        self.reconstructed_rollout = torch.empty(batch_shape).to(device)
        self.reconstruction_ptr = 0
    def set_z(self, z_sample, z_mean=None, z_logvar=None):
        self.z_sample = z_sample
    def append_state(self, q, p):
        self.q_s.append(q)
        self.p_s.append(p)
    def append_reconstruction(self, reconstruction):
        self.reconstructed_rollout[:, self.reconstruction_ptr] = reconstruction
        self.reconstruction_ptr += 1

class Integrator:
    def __init__(self, delta_t, method="Euler"):
        self.delta_t = delta_t
        self.method = method
    def _get_grads(self, q, p, hnn, remember_energy=False):
        energy = hnn(q=q, p=p)
        dq_dt = torch.autograd.grad(energy, p, create_graph=True, retain_graph=True,
                                    grad_outputs=torch.ones_like(energy))[0]
        dp_dt = -torch.autograd.grad(energy, q, create_graph=True, retain_graph=True,
                                     grad_outputs=torch.ones_like(energy))[0]
        if remember_energy:
            self.energy = energy.detach().cpu().numpy()
        return dq_dt, dp_dt
    def step(self, q, p, hnn):
        dq_dt, dp_dt = self._get_grads(q, p, hnn, remember_energy=True)
        return q + self.delta_t * dq_dt, p + self.delta_t * dp_dt

class EncoderNet(nn.Module):
    def __init__(self, in_channels, latent_channels):
        super().__init__()
        self.out_mean = nn.Conv2d(in_channels, latent_channels, 3, padding=1)

class TransformerNet(nn.Module):
    def __init__(self, latent_channels, state_channels):
        super().__init__()
        self.conv = nn.Conv2d(latent_channels, 2 * state_channels, 3, padding=1)
    def forward(self, x):
        q, p = self.conv(x).chunk(2, dim=1)
        return q, p

class HamiltonianNet(nn.Module):
    def __init__(self, state_channels):
        super().__init__()
        self.conv = nn.Conv2d(2 * state_channels, 1, 3, padding=1)
    def forward(self, q, p):
        return torch.tanh(self.conv(torch.cat([q, p], dim=1))).sum(dim=(1, 2, 3))

class HGN:
    def __init__(self, encoder, transformer, hnn, decoder, integrator, device, dtype, seq_len, channels):
        self.seq_len = seq_len
        self.channels = channels
        self.device = device
        self.dtype = dtype
        self.encoder = encoder
        self.transformer = transformer
        self.hnn = hnn
        self.decoder = decoder
        self.integrator = integrator
    def get_random_sample(self, n_steps, img_shape=(32, 32)):
        # Sample from a normal distribution the latent representation of the rollout
        latent_shape = (1, self.encoder.out_mean.out_channels, img_shape[0],
                        img_shape[1])
        latent_representation = torch.randn(latent_shape)

        # Instantiate prediction object
        prediction_shape = (1, n_steps, self.channels, img_shape[0], img_shape[1])
        prediction = HgnResult(batch_shape=torch.Size(prediction_shape), device=self.device)
        prediction.set_z(z_sample=latent_representation)

        # Initial state
        q, p = self.transformer(latent_representation)
        prediction.append_state(q=q, p=p)
        x_reconstructed = self.decoder(q)
        prediction.append_reconstruction(x_reconstructed)

        # Estimate predictions
        for _ in range(n_steps - 1):
            q, p = self.integrator.step(q=q, p=p, hnn=self.hnn)
            prediction.append_state(q=q, p=p)
            x_reconstructed = self.decoder(q)
            prediction.append_reconstruction(x_reconstructed)
        return prediction

if __name__ == "__main__":
    device = "cuda:0" if torch.cuda.is_available() else "cpu"
    channels, latent, state = 3, 4, 2
    encoder = EncoderNet(channels, latent).to(device)
    transformer = TransformerNet(latent, state).to(device)
    hnn = HamiltonianNet(state).to(device)
    decoder = nn.Sequential(nn.Conv2d(state, channels, 3, padding=1), nn.Sigmoid()).to(device)
    hgn = HGN(encoder, transformer, hnn, decoder, Integrator(delta_t=0.125), device,
              torch.float, seq_len=3, channels=channels)
    prediction = hgn.get_random_sample(n_steps=3, img_shape=(8, 8))
    print(prediction.reconstructed_rollout.shape)
