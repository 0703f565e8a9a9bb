# RL-VIG/LibFewShot issue 82 ("The computer does not have cuda, and it will report an error
# when running": run_trainer.py on Windows without CUDA fails in Trainer._init_device at
# torch.cuda.set_device(self.rank) with "module 'torch._C' has no attribute '_cuda_setDevice'"):
# core/trainer.py (Trainer.__init__, train_loop, _train, _init_device, _init_model,
# _init_dataloader, _init_optim), core/utils/utils.py's prepare_device and run_trainer.py at
# a2ed2ba, minimised: a linear embedding and classifier stand in for the backbone and the
# Baseline classifier built by get_instance, a TensorDataset for the episodic data, no logger,
# tensorboard writer, meters, checkpoints or DistributedDataParallel branch.
import os
from time import time

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset


def prepare_device(rank, device_ids, n_gpu_use, backend, dist_url):
    os.environ["CUDA_VISIBLE_DEVICES"] = str(device_ids)

    n_gpu = torch.cuda.device_count()
    if n_gpu_use > 0 and n_gpu == 0:
        print("the model will be performed on CPU.")
        n_gpu_use = 0

    if n_gpu_use > n_gpu:
        print("only {} are available on this machine, "
              "but the number of the GPU in config is {}.".format(n_gpu, n_gpu_use))
        n_gpu_use = n_gpu

    device = torch.device("cuda:{}".format(rank) if n_gpu_use > 0 else "cpu")
    list_ids = list(range(n_gpu_use))

    return device, list_ids


class Baseline(nn.Module):
    def __init__(self, feat_dim, num_class, emb_func, device):
        super(Baseline, self).__init__()
        self.emb_func = emb_func
        self.device = device
        self.classifier = nn.Linear(feat_dim, num_class)
        self.loss_func = nn.CrossEntropyLoss()

    def forward(self, batch):
        image, target = batch
        image = image.to(self.device)
        target = target.to(self.device)
        output = self.classifier(self.emb_func(image))
        loss = self.loss_func(output, target)
        acc = (output.argmax(1) == target).float().mean().item() * 100
        return output, acc, loss


class Trainer(object):
    def __init__(self, rank, config):
        self.rank = rank
        self.config = config
        self.config["rank"] = rank
        self.distribute = self.config["n_gpu"] > 1
        self.device, self.list_ids = self._init_device(rank, config)
        self.model = self._init_model(config)
        self.train_loader = self._init_dataloader(config)
        self.optimizer, self.from_epoch = self._init_optim(config)

    def train_loop(self, rank):
        experiment_begin = time()
        for epoch_idx in range(self.from_epoch + 1, self.config["epoch"]):
            print("============ Train on the train set ============")
            train_acc = self._train(epoch_idx)
            print(" * Acc@1 {:.3f} ".format(train_acc))
        print("End of experiment, took {:.2f}s".format(time() - experiment_begin))

    def _train(self, epoch_idx):
        self.model.train()
        accs = []
        for batch_idx, batch in enumerate(zip(*self.train_loader)):
            output, acc, loss = self.model(
                [elem for each_batch in batch for elem in each_batch]
            )
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            accs.append(acc)
        return sum(accs) / len(accs)

    def _init_dataloader(self, config):
        dataset = TensorDataset(torch.randn(16, config["feat_dim"]),
                                torch.randint(0, config["num_class"], (16,)))
        return [DataLoader(dataset, batch_size=4, shuffle=True)]

    def _init_model(self, config):
        emb_func = nn.Sequential(nn.Linear(config["feat_dim"], config["feat_dim"]), nn.ReLU())
        model = Baseline(config["feat_dim"], config["num_class"], emb_func, self.device)
        print("Trainable params in the model: {}".format(
            sum(p.numel() for p in model.parameters() if p.requires_grad)))
        model = model.to(self.device)
        return model

    def _init_optim(self, config):
        optimizer = torch.optim.Adam(self.model.parameters(), lr=config["lr"])
        from_epoch = -1
        return optimizer, from_epoch

    def _init_device(self, rank, config):
        torch.manual_seed(config["seed"])
        device, list_ids = prepare_device(
            rank,
            config["device_ids"],
            config["n_gpu"],
            backend="nccl" if "dist_backend" not in self.config else self.config["dist_backend"],
            dist_url="tcp://127.0.0.1:" + str(config["port"])
            if "dist_url" not in self.config else self.config["dist_url"],
        )
        if device.type == "cuda":
            torch.cuda.set_device(self.rank)

        return device, list_ids


def main(rank, config):
    trainer = Trainer(rank, config)
    trainer.train_loop(rank)


if __name__ == "__main__":
    config = {"n_gpu": 1, "device_ids": 0, "port": 28125, "seed": 0, "epoch": 2,
              "feat_dim": 8, "num_class": 5, "lr": 0.01}

    if config["n_gpu"] > 1:
        os.environ["CUDA_VISIBLE_DEVICES"] = config["device_ids"]
        torch.multiprocessing.spawn(main, nprocs=config["n_gpu"], args=(config,))
    else:
        main(0, config)
