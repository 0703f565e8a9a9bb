# lschmiddey/deep_tabular_augmentation issue 11 ("RuntimeError: Expected all tensors to be on the
# same device, but found at least two devices, cuda:0 and cpu! (when checking argument for
# argument mat1 in method wrapper_addmm)" on run.fit(...) after model = dta.Autoencoder(...)
# .to(DEVICE) and data = dta.DataBunch(*dta.create_loaders(datasets, bs=1024)); the fix,
# 6d667aa "make dataloader work on any device": create_loaders takes a device and its loaders'
# collate_fn moves each batch there): common.py, callbacks.py, runner.py, model_part.py and
# dataloaders.py before 6d667aa, with the reporter's usage, minimised: TrainEvalCallback and
# LossTracker only, predict_df returns the decoded array instead of a pandas DataFrame, random
# arrays stand in for the scaled credit-card data.
import re
from collections.abc import Iterable

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable
from torch.utils.data import DataLoader, TensorDataset

_camel_re1 = re.compile('(.)([A-Z][a-z]+)')
_camel_re2 = re.compile('([a-z0-9])([A-Z])')


def camel2snake(name: str) -> str:
    s1 = re.sub(_camel_re1, r'\1_\2', name)
    return re.sub(_camel_re2, r'\1_\2', s1).lower()


def listify(p=None, q=None):
    if p is None: p = []
    elif isinstance(p, str): p = [p]
    elif not isinstance(p, Iterable): p = [p]
    n = q if type(q) == int else len(p) if q is None else len(q)
    if len(p) == 1: p = p * n
    return list(p)


# --- callbacks.py ---------------------------------------------------------------------------

class Callback():
    _order = 0
    def set_runner(self, run): self.run = run
    def __getattr__(self, k): return getattr(self.run, k)

    @property
    def name(self):
        name = re.sub(r'Callback$', '', self.__class__.__name__)
        return camel2snake(name or 'callback')

    def __call__(self, cb_name):
        f = getattr(self, cb_name, None)
        if f and f(): return True
        return False


class TrainEvalCallback(Callback):
    def begin_fit(self):
        self.run.n_epochs = 0.
        self.run.n_iter = 0

    def after_batch(self):
        if not self.in_train: return
        self.run.n_epochs += 1./self.iters
        self.run.n_iter += 1

    def begin_epoch(self):
        self.run.n_epochs = self.epoch
        self.model.train()
        self.run.in_train = True

    def begin_validate(self):
        self.model.eval()
        self.run.in_train = False


class CancelTrainException(Exception): pass
class CancelEpochException(Exception): pass
class CancelBatchException(Exception): pass


class LossTracker(Callback):
    def __init__(self, show_every=1): self.show_every = show_every

    def begin_fit(self):
        self.train_losses = []
        self.val_losses = []

    def after_batch(self):
        if self.in_train:
            self.train_losses.append(self.loss.detach().cpu())
        else:
            self.val_losses.append(self.loss.detach().cpu())

    def after_epoch(self):
        if self.run.epoch % self.show_every == 0:
            print(f'epoch: {self.run.epoch + self.show_every}')
            print(f'train loss is: {sum(self.train_losses)/len(self.train_losses)}')
            print(f'validation loss is: {sum(self.val_losses)/len(self.val_losses)}')


# --- runner.py ------------------------------------------------------------------------------

class Learner():
    def __init__(self, model, opt, loss_func, data: DataLoader, target_name: str = None,
                 target_class: int = None, cols: list = None, cont_vars: list = None):
        self.model, self.opt, self.loss_func, self.data, self.target_name, self.target_class, self.cols, self.cont_vars = \
            model, opt, loss_func, data, target_name, target_class, cols, cont_vars


class Runner():
    def __init__(self, cbs=None, cb_funcs=None):
        self.in_train = False
        cbs = listify(cbs)
        for cbf in listify(cb_funcs):
            cb = cbf()
            setattr(self, cb.name, cb)
            cbs.append(cb)
        self.stop, self.cbs = False, [TrainEvalCallback()] + cbs

    @property
    def opt(self): return self.learn.opt
    @property
    def model(self): return self.learn.model
    @property
    def loss_func(self): return self.learn.loss_func
    @property
    def data(self): return self.learn.data

    def one_batch(self, xb, _):
        try:
            self.xb = xb
            self('begin_batch')
            self.recon_batch, self.mu, self.logvar = self.model(self.xb)
            self('after_pred')
            self.loss = self.loss_func(self.recon_batch, self.xb, self.mu, self.logvar)
            self('after_loss')
            if not self.in_train: return
            self.loss.backward()
            self('after_backward')
            self.opt.step()
            self('after_step')
            self.opt.zero_grad()
        except CancelBatchException: self('after_cancel_batch')
        finally: self('after_batch')

    def all_batches(self, dl):
        self.iters = len(dl)
        try:
            for xb, _ in dl: self.one_batch(xb, _)
        except CancelEpochException: self('after_cancel_epoch')

    def fit(self, epochs, learn):
        self.epochs, self.learn, self.loss = epochs, learn, torch.tensor(0.)

        try:
            for cb in self.cbs: cb.set_runner(self)
            self('begin_fit')
            for epoch in range(epochs):
                self.epoch = epoch
                if not self('begin_epoch'): self.all_batches(self.data.train_dl)

                with torch.no_grad():
                    if not self('begin_validate'): self.all_batches(self.data.test_dl)
                self('after_epoch')

        except CancelTrainException: self('after_cancel_train')
        finally:
            self('after_fit')
            self.learn = None

    def _get_embeddings(self):
        self.in_train = False
        with torch.no_grad():
            for batch_idx, (xb, _) in enumerate(self.data.train_dl):
                self.opt.zero_grad()
                _, mu_, logvar_ = self.model(xb)
                if batch_idx == 0:
                    mu = mu_
                    logvar = logvar_
                else:
                    mu = torch.cat((mu, mu_), dim=0)
                    logvar = torch.cat((logvar, logvar_), dim=0)
        return mu, logvar

    def predict_df(self, learn, no_samples: int):
        self.learn = learn
        mu, logvar = self._get_embeddings()

        sigma = torch.exp(logvar/2)
        q = torch.distributions.Normal(mu.mean(axis=0), sigma.mean(axis=0))
        z = q.rsample(sample_shape=torch.Size([no_samples]))

        with torch.no_grad():
            pred = self.model.decode(z).cpu().numpy()
        return pred

    def __call__(self, cb_name):
        res = False
        for cb in sorted(self.cbs, key=lambda x: x._order): res = cb(cb_name) or res
        return res


# --- model_part.py --------------------------------------------------------------------------

class customLoss(nn.Module):
    def __init__(self):
        super(customLoss, self).__init__()
        self.mse_loss = nn.MSELoss(reduction="sum")

    def forward(self, x_recon, x, mu, logvar):
        loss_MSE = self.mse_loss(x_recon, x)
        loss_KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        return loss_MSE + loss_KLD


def lin_layer(ni, no):
    return nn.Sequential(nn.Linear(ni, no), nn.BatchNorm1d(no), nn.ReLU())


def get_lin_layers(input_shape: int, output_shapes: list):
    output_shapes = [input_shape] + output_shapes
    return [lin_layer(output_shapes[i], output_shapes[i+1]) for i in range(len(output_shapes)-1)]


def get_lin_layers_rev(input_shape: int, output_shapes: list):
    output_shapes = output_shapes[::-1] + [input_shape]
    layers = [lin_layer(output_shapes[i], output_shapes[i+1]) for i in range(len(output_shapes)-1)]
    layers[-1] = layers[-1][:-1]
    return layers


class Autoencoder(nn.Module):
    def __init__(self, D_in: int, lin_layers: list, latent_dim: int = 3):
        super(Autoencoder, self).__init__()
        self.encoder = nn.Sequential(*get_lin_layers(D_in, lin_layers))
        self.out_features_ = self.encoder[-1][0].out_features
        self.fc1 = nn.Linear(self.out_features_, latent_dim)
        self.bn1 = nn.BatchNorm1d(num_features=latent_dim)
        self.fc21 = nn.Linear(latent_dim, latent_dim)
        self.fc22 = nn.Linear(latent_dim, latent_dim)
        self.fc3 = nn.Linear(latent_dim, latent_dim)
        self.fc_bn3 = nn.BatchNorm1d(latent_dim)
        self.fc4 = nn.Linear(latent_dim, self.out_features_)
        self.fc_bn4 = nn.BatchNorm1d(self.out_features_)
        self.decoder = nn.Sequential(*get_lin_layers_rev(D_in, lin_layers))

    def encode(self, x):
        fc1 = F.relu(self.bn1(self.fc1(self.encoder(x))))
        return self.fc21(fc1), self.fc22(fc1)

    def reparameterize(self, mu, logvar):
        if self.training:
            std = logvar.mul(0.5).exp_()
            eps = Variable(std.data.new(std.size()).normal_())
            return eps.mul(std).add_(mu)
        else:
            return mu

    def decode(self, z):
        fc3 = F.relu(self.fc_bn3(self.fc3(z)))
        fc4 = F.relu(self.fc_bn4(self.fc4(fc3)))
        return self.decoder(fc4)

    def forward(self, x):
        mu, logvar = self.encode(x)
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


# --- dataloaders.py -------------------------------------------------------------------------

def create_datasets(train_data: np.array, train_target: np.array,
                    test_data: np.array, test_target: np.array):
    trn_ds = TensorDataset(torch.tensor(train_data).float(), torch.tensor(train_target).long())
    tst_ds = TensorDataset(torch.tensor(test_data).float(), torch.tensor(test_target).long())
    return trn_ds, tst_ds


def create_loaders(data: TensorDataset, bs=128, jobs=0):
    trn_ds, tst_ds = data
    trn_dl = DataLoader(trn_ds, batch_size=bs, shuffle=True, num_workers=jobs)
    tst_dl = DataLoader(tst_ds, batch_size=bs, shuffle=False, num_workers=jobs)
    return trn_dl, tst_dl


class DataBunch():
    def __init__(self, train_dl, test_dl):
        self.train_dl, self.test_dl = train_dl, test_dl


# --- the reporter's script ------------------------------------------------------------------

DEVICE = torch.device('cuda' if torch.cuda.is_available() else 'cpu')

X_train, X_test = np.random.rand(40, 6), np.random.rand(20, 6)
y_train, y_test = np.ones(40), np.ones(20)
datasets = create_datasets(X_train, y_train, X_test, y_test)
data = DataBunch(*create_loaders(datasets, bs=16))

D_in = X_train.shape[1]
VAE_arch = [8, 6, 4]
model = Autoencoder(D_in, VAE_arch, latent_dim=3).to(DEVICE)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
loss_func = customLoss()

learn = Learner(model, opt, loss_func, data, target_name='Class', target_class=1)
run = Runner(cb_funcs=[LossTracker])
run.fit(2, learn)
print(run.predict_df(learn, no_samples=5).shape)
