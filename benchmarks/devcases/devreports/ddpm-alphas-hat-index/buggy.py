# diffusion-ddpm issue 5 ("indices should be either on cpu or on the same device as the indexed
# tensor", at `alpha_hat = self.alphas_hat[timesteps].to(images.device)`): src/scheduler/ddpm.py's
# DDPMPipeline (a plain class whose schedule is made on the CPU), src/utils/common.py broadcast,
# src/config/train.py and src/train.py's training loop, minimised: a toy noise predictor with a
# timestep embedding replaces the UNet, random images replace the dataset, no evaluation or
# checkpoints.
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class TrainingConfig:
    image_size = 16
    image_channels = 3
    train_batch_size = 2
    num_epochs = 1
    start_epoch = 0
    learning_rate = 2e-5
    diffusion_timesteps = 1000
    device = "cuda"


training_config = TrainingConfig()


def broadcast(values, broadcast_to):
    values = values.flatten()

    while len(values.shape) < len(broadcast_to.shape):
        values = values.unsqueeze(-1)

    return values


class DDPMPipeline:
    def __init__(self, beta_start=1e-4, beta_end=1e-2, num_timesteps=1000):
        # Betas settings are in section 4 of https://arxiv.org/pdf/2006.11239.pdf
        # Implemented linear schedule for now, cosine works better tho.
        self.betas = torch.linspace(beta_start, beta_end, num_timesteps)
        self.alphas = 1 - self.betas

        # alpha-hat in the paper, precompute them
        self.alphas_hat = torch.cumprod(self.alphas, dim=0)

        self.num_timesteps = num_timesteps

    def forward_diffusion(self, images, timesteps) -> tuple[torch.Tensor, torch.Tensor]:
        """
        https://arxiv.org/pdf/2006.11239.pdf, equation (14), the term inside epsilon_theta
        :return:
        """
        gaussian_noise = torch.randn(images.shape).to(images.device)
        alpha_hat = self.alphas_hat[timesteps].to(images.device)
        alpha_hat = broadcast(alpha_hat, images)

        return torch.sqrt(alpha_hat) * images + torch.sqrt(1 - alpha_hat) * gaussian_noise, gaussian_noise

    def reverse_diffusion(self, model, noisy_images, timesteps):
        predicted_noise = model(noisy_images, timesteps)
        return predicted_noise


class UNet(nn.Module):
    def __init__(self, image_size=16, input_channels=3, time_steps=1000):
        super().__init__()
        self.time_embedding = nn.Embedding(time_steps, input_channels)
        self.conv = nn.Conv2d(input_channels, input_channels, 3, padding=1)

    def forward(self, x, timestep):
        return self.conv(x + self.time_embedding(timestep)[:, :, None, None])


def main():
    train_dataloader = torch.utils.data.DataLoader(
        [{'images': torch.rand(3, 16, 16) * 2 - 1} for _ in range(4)],
        batch_size=training_config.train_batch_size)

    model = UNet(image_size=training_config.image_size,
                 input_channels=training_config.image_channels).to(training_config.device)

    optimizer = torch.optim.Adam(model.parameters(), lr=training_config.learning_rate)

    diffusion_pipeline = DDPMPipeline(beta_start=1e-4, beta_end=1e-2, num_timesteps=training_config.diffusion_timesteps)

    # Training loop
    for epoch in range(training_config.start_epoch, training_config.num_epochs):
        mean_loss = 0

        model.train()
        for step, batch in enumerate(train_dataloader):
            original_images = batch['images'].to(training_config.device)
            batch_size = original_images.shape[0]

            # Sample a random timestep for each image
            timesteps = torch.randint(0, diffusion_pipeline.num_timesteps, (batch_size,),
                                      device=training_config.device).long()

            # Apply forward diffusion process at the given timestep
            noisy_images, noise = diffusion_pipeline.forward_diffusion(original_images, timesteps)
            noisy_images = noisy_images.to(training_config.device)

            # Predict the noise residual
            noise_pred = model(noisy_images, timesteps)
            loss = F.mse_loss(noise_pred, noise)
            # Calculate new mean on the run without accumulating all the values
            mean_loss = mean_loss + (loss.detach().item() - mean_loss) / (step + 1)
            loss.backward()

            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad()

        print(f"Epoch {epoch}: loss {mean_loss:.4f}")


if __name__ == "__main__":
    main()
