# deepvision pull request 31 ("Enable CUDA for ViTs": "`torch.arange()` produced a CPU tensor,
# which didn't mix well with `torch.nn.Embedding()`", closes issue 30):
# deepvision/layers/patching_and_embedding.py's PatchingAndEmbedding (PyTorch backend) with
# vit_pt.py's ViTPT, minimised: a plain nn.Module with the LightningModule's training_step
# replaces pl.LightningModule, nn.TransformerEncoderLayer replaces deepvision's
# TransformerEncoder, and a short loop moves the model and batches as the Trainer does on a GPU.
import torch
from torch import nn


class __PatchingAndEmbeddingPT(torch.nn.Module):
    def __init__(self, project_dim, input_shape, patch_size, padding="valid", **kwargs):
        super().__init__(**kwargs)
        self.project_dim = project_dim
        self.patch_size = patch_size
        self.input_shape = input_shape
        self.padding = padding
        self.projection = nn.Conv2d(
            input_shape[0],
            self.project_dim,
            kernel_size=self.patch_size,
            stride=self.patch_size,
            padding=self.padding,
        )
        self.class_token = nn.Parameter(torch.rand(1, 1, self.project_dim))
        self.num_patches = (
            input_shape[1] // self.patch_size * input_shape[2] // self.patch_size
        )
        self.position_embedding = torch.nn.Embedding(
            num_embeddings=self.num_patches + 1, embedding_dim=self.project_dim
        )

    def forward(self, images):
        patches = self.projection(images)
        patch_shapes = patches.shape
        patches_flattened = torch.reshape(
            patches,
            shape=(patch_shapes[0], patch_shapes[-1] * patch_shapes[-1], patch_shapes[1]),
        )
        flattened_shapes = patches_flattened.shape
        class_token_broadcast = self.class_token.expand(flattened_shapes[0], -1, -1)
        patches_flattened = torch.cat([class_token_broadcast, patches_flattened], 1)
        positions = torch.arange(start=0, end=self.num_patches + 1, step=1)
        encoded = patches_flattened + self.position_embedding(positions)
        return encoded


LAYER_BACKBONES = {
    "pytorch": __PatchingAndEmbeddingPT,
}


def PatchingAndEmbedding(project_dim, patch_size, backend, input_shape=None, padding="valid"):
    layer_class = LAYER_BACKBONES.get(backend)
    return layer_class(project_dim=project_dim, patch_size=patch_size,
                       input_shape=input_shape, padding=padding)


class ViTPT(nn.Module):
    def __init__(self, input_shape, classes, patch_size, transformer_layer_num, project_dim,
                 num_heads, mlp_dim, mlp_dropout):
        super().__init__()
        self.mlp_dropout = mlp_dropout
        self.patching_and_embedding = PatchingAndEmbedding(
            project_dim=project_dim, patch_size=patch_size, input_shape=input_shape,
            backend="pytorch",
        )
        self.transformer_layers = nn.ModuleList()
        for _ in range(transformer_layer_num):
            self.transformer_layers.append(
                nn.TransformerEncoderLayer(project_dim, num_heads, mlp_dim, mlp_dropout,
                                           batch_first=True)
            )
        self.layer_norm = nn.LayerNorm(project_dim, eps=1e-6)
        self.linear = nn.Linear(project_dim, classes)

    def forward(self, input_tensor):
        encoded_patches = self.patching_and_embedding(input_tensor)
        x = nn.Dropout(self.mlp_dropout)(encoded_patches)
        for transformer_layer in self.transformer_layers:
            x = transformer_layer(x)
        layer_norm = self.layer_norm(x)
        output = self.linear(layer_norm[:, 0])
        return nn.Softmax(dim=1)(output)

    def compile(self, loss, optimizer):
        self.loss = loss
        self.optimizer = optimizer

    def compute_loss(self, outputs, targets):
        return self.loss(outputs, targets)

    def training_step(self, train_batch, batch_idx):
        inputs, targets = train_batch
        outputs = self.forward(inputs)
        return self.compute_loss(outputs, targets)


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = ViTPT(input_shape=(3, 16, 16), classes=4, patch_size=4, transformer_layer_num=1,
                  project_dim=8, num_heads=2, mlp_dim=16, mlp_dropout=0.1).to(device)
    model.compile(loss=nn.CrossEntropyLoss(), optimizer=torch.optim.Adam(model.parameters(), 1e-3))
    batches = [(torch.rand(2, 3, 16, 16), torch.randint(0, 4, (2,))) for _ in range(2)]
    for batch_idx, (inputs, targets) in enumerate(batches):
        loss = model.training_step((inputs.to(device), targets.to(device)), batch_idx)
        model.optimizer.zero_grad()
        loss.backward()
        model.optimizer.step()
        print(batch_idx, loss.item())
