# Amphion issue 263 (the maintainer's fix: `epoch_sum_loss += loss.item()` at base_trainer.py
# line 437): models/tts/valle_v2/base_trainer.py's train_loop/_train_epoch/_train_step, minimised:
# a small stand-in for accelerate's Accelerator (device, backward, accumulate, sync_gradients,
# clip_grad_norm_, log), a toy model and loss in place of VALL-E, random batches, no
# checkpointing, no tqdm, and the epoch's training loss printed as well as logged.
import contextlib
import math

import torch
import torch.nn as nn


class Accelerator:
    def __init__(self):
        self.device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
        self.sync_gradients = True
        self.is_main_process = True

    def prepare(self, model):
        return model.to(self.device)

    def accumulate(self, model):
        return contextlib.nullcontext()

    def backward(self, loss):
        loss.backward()

    def clip_grad_norm_(self, parameters, max_norm):
        return torch.nn.utils.clip_grad_norm_(parameters, max_norm)

    def log(self, values, step=None):
        pass


class BaseTrainer:
    def __init__(self, model, train_dataloader, lr=1e-3, epochs=1, warmup_steps=2, total_steps=10):
        self.accelerator = Accelerator()
        self.model = self.accelerator.prepare(model)
        self.train_dataloader = train_dataloader
        self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=lr)
        self.lr = lr
        self.min_lr = lr / 10
        self.warmup_steps = warmup_steps
        self.total_steps = total_steps
        self.gradient_accumulation_step = 1
        self.max_epoch = epochs
        self.epoch = 0
        self.step = 0
        self.batch_count = 0

    def train_loop(self):
        while self.epoch < self.max_epoch:
            train_loss = self._train_epoch()
            print("  |- Train/Loss: {:.6f}".format(train_loss), train_loss)
            self.accelerator.log({"Epoch/Train Loss": train_loss}, step=self.epoch)
            self.epoch += 1

    def get_lr(self, it):
        # 1) linear warmup for warmup_iters steps
        if it < self.warmup_steps:
            return self.lr * it / self.warmup_steps
        # 2) if it > lr_decay_iters, return min learning rate
        if it > self.total_steps:
            return self.min_lr
        # 3) in between, use cosine decay down to min learning rate
        decay_ratio = (it - self.warmup_steps) / (self.total_steps - self.warmup_steps)
        coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))  # coeff ranges 0..1
        return self.min_lr + coeff * (self.lr - self.min_lr)

    def _train_epoch(self):
        r"""Training epoch. Should return average loss of a batch (sample) over
        one epoch. See ``train_loop`` for usage.
        """
        self.model.train()
        epoch_sum_loss: float = 0.0
        ema_loss = None

        for batch in self.train_dataloader:
            assert batch is not None

            # update learning rate
            lr = self.get_lr(self.step)
            for param_group in self.optimizer.param_groups:
                param_group["lr"] = lr

            # Do training step and BP
            with self.accelerator.accumulate(self.model):
                loss = self._train_step(batch)
                self.current_loss = loss.item()
                ema_loss = (
                    0.99 * ema_loss + 0.01 * self.current_loss
                    if ema_loss is not None
                    else self.current_loss
                )
                self.accelerator.backward(loss)
                if self.accelerator.sync_gradients:
                    self.accelerator.clip_grad_norm_(self.model.parameters(), 1.0)
                self.optimizer.step()
                self.optimizer.zero_grad()
            self.batch_count += 1

            if self.accelerator.sync_gradients:
                self.accelerator.log(
                    {
                        "Step/Train Loss": loss,
                        "Step/Learning Rate": self.optimizer.param_groups[0]["lr"],
                    },
                    step=self.step,
                )
                epoch_sum_loss += loss.item()
                self.step += 1

        return (
            epoch_sum_loss
            / len(self.train_dataloader)
            * self.gradient_accumulation_step
        )

    def _train_step(self, batch):
        return self._forward_step(batch)

    def _forward_step(self, batch):
        x, y = (t.to(self.accelerator.device) for t in batch)
        return nn.functional.cross_entropy(self.model(x), y)


if __name__ == "__main__":
    loader = torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.randn(8, 16), torch.randint(0, 4, (8,))), batch_size=2)
    trainer = BaseTrainer(nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4)), loader)
    trainer.train_loop()
