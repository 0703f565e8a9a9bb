# MUNIT issue 33 ("RuntimeError when set vgg_w=1"; fixed upstream in 688ea8f with .cuda()):
# utils.py vgg_preprocess, which builds the BGR mean as `type(batch.data)(size)`, called from
# trainer.py's MUNIT_Trainer.compute_vgg_loss in gen_update, with train.py's loop, minimised:
# toy AdaIN-free generators and a two-layer "VGG", no discriminators, random image pairs.
import torch
import torch.nn as nn
from torch.autograd import Variable


def vgg_preprocess(batch):
    tensortype = type(batch.data)
    (r, g, b) = torch.chunk(batch, 3, dim = 1)
    batch = torch.cat((b, g, r), dim = 1) # convert RGB to BGR
    batch = (batch + 1) * 255 * 0.5 # [-1, 1] -> [0, 255]
    mean = tensortype(batch.data.size()).cuda()
    mean[:, 0, :, :] = 103.939
    mean[:, 1, :, :] = 116.779
    mean[:, 2, :, :] = 123.680
    batch = batch.sub(Variable(mean)) # subtract mean
    return batch


class Vgg16(nn.Module):
    def __init__(self):
        super(Vgg16, self).__init__()
        self.conv1_1 = nn.Conv2d(3, 8, kernel_size=3, stride=1, padding=1)
        self.conv1_2 = nn.Conv2d(8, 8, kernel_size=3, stride=1, padding=1)

    def forward(self, X):
        h = torch.relu(self.conv1_1(X))
        return torch.relu(self.conv1_2(h))


class ToyGen(nn.Module):
    def __init__(self, input_dim, style_dim):
        super(ToyGen, self).__init__()
        self.enc_content = nn.Conv2d(input_dim, 8, 3, padding=1)
        self.enc_style = nn.Linear(input_dim, style_dim)
        self.dec = nn.Conv2d(8 + style_dim, input_dim, 3, padding=1)

    def encode(self, images):
        style_fake = self.enc_style(images.mean(dim=(2, 3))).unsqueeze(-1).unsqueeze(-1)
        content = self.enc_content(images)
        return content, style_fake

    def decode(self, content, style):
        style = style.expand(-1, -1, content.size(2), content.size(3))
        return torch.tanh(self.dec(torch.cat([content, style], 1)))


class MUNIT_Trainer(nn.Module):
    def __init__(self, hyperparameters):
        super(MUNIT_Trainer, self).__init__()
        lr = hyperparameters['lr']
        self.style_dim = hyperparameters['gen']['style_dim']
        # Initiate the networks
        self.gen_a = ToyGen(hyperparameters['input_dim_a'], self.style_dim)  # auto-encoder for domain a
        self.gen_b = ToyGen(hyperparameters['input_dim_b'], self.style_dim)  # auto-encoder for domain b
        self.instancenorm = nn.InstanceNorm2d(8, affine=False)

        gen_params = list(self.gen_a.parameters()) + list(self.gen_b.parameters())
        self.gen_opt = torch.optim.Adam([p for p in gen_params if p.requires_grad], lr=lr)

        # Load VGG model if needed
        if 'vgg_w' in hyperparameters.keys() and hyperparameters['vgg_w'] > 0:
            self.vgg = Vgg16()
            self.vgg.eval()
            for param in self.vgg.parameters():
                param.requires_grad = False

    def recon_criterion(self, input, target):
        return torch.mean(torch.abs(input - target))

    def gen_update(self, x_a, x_b, hyperparameters):
        self.gen_opt.zero_grad()
        s_a = Variable(torch.randn(x_a.size(0), self.style_dim, 1, 1).cuda())
        s_b = Variable(torch.randn(x_b.size(0), self.style_dim, 1, 1).cuda())
        # encode
        c_a, s_a_prime = self.gen_a.encode(x_a)
        c_b, s_b_prime = self.gen_b.encode(x_b)
        # decode (within domain)
        x_a_recon = self.gen_a.decode(c_a, s_a_prime)
        x_b_recon = self.gen_b.decode(c_b, s_b_prime)
        # decode (cross domain)
        x_ba = self.gen_a.decode(c_b, s_a)
        x_ab = self.gen_b.decode(c_a, s_b)
        # reconstruction loss
        self.loss_gen_recon_x_a = self.recon_criterion(x_a_recon, x_a)
        self.loss_gen_recon_x_b = self.recon_criterion(x_b_recon, x_b)
        # domain-invariant perceptual loss
        self.loss_gen_vgg_a = self.compute_vgg_loss(self.vgg, x_ba, x_b) if hyperparameters['vgg_w'] > 0 else 0
        self.loss_gen_vgg_b = self.compute_vgg_loss(self.vgg, x_ab, x_a) if hyperparameters['vgg_w'] > 0 else 0
        # total loss
        self.loss_gen_total = hyperparameters['recon_x_w'] * self.loss_gen_recon_x_a + \
                              hyperparameters['recon_x_w'] * self.loss_gen_recon_x_b + \
                              hyperparameters['vgg_w'] * self.loss_gen_vgg_a + \
                              hyperparameters['vgg_w'] * self.loss_gen_vgg_b
        self.loss_gen_total.backward()
        self.gen_opt.step()

    def compute_vgg_loss(self, vgg, img, target):
        img_vgg = vgg_preprocess(img)
        target_vgg = vgg_preprocess(target)
        img_fea = vgg(img_vgg)
        target_fea = vgg(target_vgg)
        return torch.mean((self.instancenorm(img_fea) - self.instancenorm(target_fea)) ** 2)


config = {'lr': 0.0001, 'input_dim_a': 3, 'input_dim_b': 3, 'gen': {'style_dim': 4},
          'vgg_w': 1, 'recon_x_w': 10}
trainer = MUNIT_Trainer(config)
trainer.cuda()
train_loader_a = torch.utils.data.DataLoader(torch.rand(4, 3, 16, 16) * 2 - 1, batch_size=2)
train_loader_b = torch.utils.data.DataLoader(torch.rand(4, 3, 16, 16) * 2 - 1, batch_size=2)

for it, (images_a, images_b) in enumerate(zip(train_loader_a, train_loader_b)):
    images_a, images_b = images_a.cuda().detach(), images_b.cuda().detach()
    trainer.gen_update(images_a, images_b, config)
    print("Iteration: %08d" % (it + 1), trainer.loss_gen_total.item())
