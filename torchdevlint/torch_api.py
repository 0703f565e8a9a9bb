"""What torchdevlint knows about the PyTorch ecosystem's API, as data.

Everything here answers one question: given a qualified name (``torch.randn``) or a method
name on a value of known kind, what kind of value comes out? Unknown names are deliberately
absent: the analysis stays silent on what it cannot tell.
"""

from __future__ import annotations

import re
from typing import Optional

# torch.* functions that return a tensor.
TENSOR_FUNCTIONS = frozenset(
    """
    tensor as_tensor asarray from_numpy frombuffer from_dlpack zeros ones empty full rand randn
    randint randperm arange range linspace logspace eye zeros_like ones_like empty_like full_like
    rand_like randn_like randint_like empty_strided cat concat concatenate stack hstack vstack
    dstack column_stack row_stack where matmul mm bmm addmm baddbmm einsum tensordot outer
    inner dot mv sum mean std var prod cumsum cumprod exp log log2 log10 log1p expm1 sqrt rsqrt
    sigmoid tanh softmax log_softmax relu clamp clip abs neg sign floor ceil round trunc
    pow square sin cos tan atan2 maximum minimum fmax fmin flatten reshape squeeze unsqueeze
    transpose permute movedim swapaxes narrow argmax argmin argsort
    masked_fill masked_select gather scatter scatter_add index_select take take_along_dim
    tril triu diag diagonal diag_embed cdist cosine_similarity pairwise_distance bernoulli
    multinomial normal poisson polar complex view_as_real view_as_complex flip fliplr flipud
    roll rot90 repeat_interleave tile broadcast_to expand_copy clone detach lerp addcmul
    addcdiv logsumexp norm dist nan_to_num isnan isinf isfinite eq ne lt le gt ge logical_and
    logical_or logical_not logical_xor bitwise_and bitwise_or count_nonzero nonzero bucketize
    searchsorted histc bincount tril_indices triu_indices cartesian_prod combinations
    block_diag kron cross trace det inverse pinverse cholesky erf erfinv digamma lgamma
    mul add sub div true_divide floor_divide remainder fmod reciprocal heaviside
    max min amax amin aminmax sort topk median mode kthvalue cummax cummin
    stft istft angle real imag conj atan asin acos sinh cosh atanh hypot logaddexp diff
    """.split()
)

# torch factories: without ``device=`` they create on the CPU, whatever their arguments hold.
FACTORIES = frozenset(
    """
    tensor as_tensor asarray from_numpy zeros ones empty full rand randn randint randperm
    arange range linspace logspace eye tril_indices triu_indices Tensor FloatTensor
    LongTensor IntTensor BoolTensor DoubleTensor HalfTensor ByteTensor
    """.split())

# The factories by what they make (TDL003, TDL005, TDL007, TDL009, TDL011, their prefilters):
# always at least one dimension; indices; the shape their size arguments say; a tensor of
# their data; legacy tensor types; the shape of another tensor.
ALWAYS_SHAPED_FACTORIES = frozenset("arange linspace logspace randperm eye".split())
# Python builtins a ``for`` loop is looked through (``for i, (a, b) in enumerate(zip(xs, ys))``:
# ``a`` is an item of ``xs``), and those that give a number (``correct / len(labels)``).
LOOP_WRAPPERS = frozenset(("enumerate", "zip"))
NUMBER_BUILTINS = frozenset(("len", "float", "int"))
# Python builtins that give a number when every item they reduce is one (``sum(len(t) for t in
# texts)``); of tensors they give a tensor.
REDUCING_BUILTINS = frozenset(("sum", "min", "max", "abs", "round"))
# ... and the number of dimensions each of those makes, whatever its arguments
FACTORY_RANKS = {"arange": 1, "linspace": 1, "logspace": 1, "randperm": 1, "eye": 2}
INDEX_FACTORIES = frozenset(("tril_indices", "triu_indices"))
SIZE_FACTORIES = frozenset("zeros ones empty rand randn full".split())
DATA_FACTORIES = frozenset(("tensor", "as_tensor"))
LEGACY_TENSOR_TYPES = frozenset(
    "Tensor FloatTensor LongTensor IntTensor BoolTensor DoubleTensor HalfTensor ByteTensor".split())
LIKE_FACTORIES = frozenset(
    "zeros_like ones_like empty_like full_like rand_like randn_like".split())
# numpy functions that make an array as the torch factory of the same shape rule makes a tensor
# (``np.linspace(0, 1, n)``, ``np.zeros((d, d))``, ``np.array([...])``): the data of
# ``torch.tensor(...)`` / ``torch.from_numpy(...)`` with a dimension (TDL005, issue 28).
NUMPY_ARRAY_FACTORIES = {
    **{f"numpy.{name}": name for name in "arange linspace logspace eye zeros ones empty full".split()},
    "numpy.identity": "eye", "numpy.array": "tensor", "numpy.asarray": "tensor",
    "numpy.random.rand": "rand", "numpy.random.randn": "randn",
}
# torch functions that reduce a model's parameters (given as ``model.parameters()``) to a
# tensor on their device: the total norm ``clip_grad_norm_`` returns, which TTS tested with
# ``np.isinf(grad_norm)`` (issue 28; "can't convert cuda:0 device type tensor to numpy").
PARAMETER_REDUCTIONS = frozenset((
    "torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad.clip_grad_norm_",
    "torch.nn.utils.clip_grad_norm", "torch.nn.utils.parameters_to_vector",
    "torch.nn.utils.convert_parameters.parameters_to_vector"))
# numpy functions that allocate an array a program fills item by item (``g_loss = np.zeros((n,
# 1))``, then ``g_loss[i] = loss.data``): storing a tensor there converts it through NumPy
# (TDL008, issue 28: Learning-to-See-in-the-Dark's loss log).
NUMPY_ALLOCATIONS = frozenset(f"numpy.{name}" for name in "zeros empty ones full".split())
NUMPY_ALLOCATION_NAMES = tuple(sorted(name.rpartition(".")[2] for name in NUMPY_ALLOCATIONS))
# numpy array methods whose result keeps the array's dimensions (at least one of them)
NUMPY_SHAPE_KEEPING = frozenset(("astype", "copy"))
# Factories given sizes (a ``*_like``: another tensor's), and those that make a tensor of their
# data (0-dim from a number).
SIZED_FACTORIES = SIZE_FACTORIES | {"randint"} | LIKE_FACTORIES
SCALAR_FACTORIES = DATA_FACTORIES | frozenset(("from_numpy", "scalar_tensor", "asarray"))
# Factories that compute their values (TDL009), and every factory TDL007 reports.
GENERATING_FACTORIES = SIZE_FACTORIES | ALWAYS_SHAPED_FACTORIES | {"randint"}
OFF_DEVICE_FACTORIES = ALWAYS_SHAPED_FACTORIES | SIZE_FACTORIES | LEGACY_TENSOR_TYPES | {
    "tensor", "randint"}
# The legacy constructors by their qualified names (``torch.Tensor([...])`` makes a CPU tensor;
# ``torch.cuda.FloatTensor`` is another name).
LEGACY_CONSTRUCTORS = frozenset(f"torch.{name}" for name in LEGACY_TENSOR_TYPES)
# Python's calls that stop the whole program (``sys.exit``, ``os._exit``, ``os.abort``):
# an exit without CUDA says the program needs it (the builder on LibCST, the project index
# on ast).
PROGRAM_STOP_CALLS = frozenset("exit _exit quit abort".split())
# Packages whose work is done by CUDA kernels and that have no CPU path: a program that
# imports one unconditionally runs only on an NVIDIA GPU (issue 28). NVIDIA Apex (fused
# optimizers, amp), FlashAttention, xFormers' attention kernels, bitsandbytes' 8-bit and 4-bit
# kernels (CUDA-only before its 2024 multi-backend releases), Transformer Engine and MS-AMP
# (FP8 on Hopper/Ada GPUs), PyCUDA, CuPy (CUDA or ROCm arrays). (Triton kernel modules are
# the analysis's own case: ``Guards.requires_cuda_throughout``.)
CUDA_ONLY_PACKAGES = frozenset(
    "apex flash_attn xformers bitsandbytes transformer_engine msamp pycuda cupy".split())
# Autograd's entry points (TDL011): the gradients given must be on their outputs' device
# (qualified name -> the positions and keywords of the outputs and of their gradients).
GRADIENT_FUNCTIONS = {
    "torch.autograd.grad": ((0, "outputs"), (2, "grad_outputs")),
    "torch.autograd.backward": ((0, "tensors"), (1, "grad_tensors")),
}
# Functions outside torch whose result is a tensor on their first argument's device: einops'
# reshapes (``rearrange(x, "b n d -> b d n")``).
# Calls that return their first argument's value itself, as a tensor on its device and with
# its shape: the ``Variable`` wrapper of torch before 0.4, an identity since (``h0 =
# Variable(torch.zeros(2, n, 8))`` in an ``init_hidden``; ``x = Variable(x)`` in a loop).
VALUE_WRAPPERS = frozenset(("torch.autograd.Variable", "torch.autograd.variable.Variable"))
DEVICE_KEEPING_FUNCTIONS = frozenset(
    ("einops.rearrange", "einops.repeat", "einops.reduce")) | VALUE_WRAPPERS
# Values independent of the device that computes them (exact in any dtype), and random ones.
EXACT_FACTORIES = frozenset("zeros ones empty eye".split())
RANDOM_FACTORIES = frozenset("rand randn randint randperm".split())
# torch functions of one tensor whose result has its shape (``torch.tril(x)``).
TRIANGLE_FUNCTIONS = frozenset(("tril", "triu"))
# The torch functions TDL005 takes for a tensor made on the CPU (with a dimension, by their
# arguments) besides the factories above: numpy's data, random integers of a given size.
STATE_FACTORY_EXTRAS = frozenset(("from_numpy", "randint"))
# Tensor methods whose result is on the receiver's device with at least its dimensions, and
# elementwise math (a method, or a torch function of its first argument).
SHAPE_KEEPING_METHODS = frozenset(
    """
    float double half bfloat16 long int short bool byte char view reshape unsqueeze expand
    transpose t permute contiguous clone detach flip repeat flatten unflatten requires_grad_ tril
    triu expand_as normal_ uniform_ bernoulli_ random_ fill_ zero_ clamp_
    """.split())  # (an in-place fill returns its receiver: ``noise = self.noise.normal_(0, 0.1)``)
ELEMENTWISE = frozenset(
    """
    exp log log2 log1p sin cos tan sqrt rsqrt sigmoid tanh abs neg pow clamp clip floor ceil
    round reciprocal square sign mul add sub div masked_fill cumsum cumprod logical_not
    """.split())

# Tensor methods that take another tensor, which must be on the receiver's device and enters
# the result: comparisons (whose bool result carries no autograd history) and arithmetic.
COMPARISON_METHODS = frozenset("eq ne lt le gt ge".split())
ARITHMETIC_METHODS = frozenset(
    """add sub mul div true_divide matmul mm bmm maximum minimum lerp where masked_fill add_ sub_
    mul_ div_ masked_fill_""".split())
BINARY_TENSOR_METHODS = COMPARISON_METHODS | ARITHMETIC_METHODS

# Sub-namespaces whose functions return tensors (torch.nn.functional.relu, torch.fft.fft, ...).
TENSOR_NAMESPACES = ("torch.nn.functional.", "torch.fft.", "torch.linalg.", "torch.special.")


def is_tensor_function(qualified: str) -> bool:
    """A torch function (by qualified name) that returns a tensor: ``torch.cat``,
    ``torch.nn.functional.relu``, ``torch.fft.fft`` (factories such as ``torch.zeros``
    included)."""
    return qualified.startswith("torch.") and (
        qualified.rpartition(".")[2] in TENSOR_FUNCTIONS or qualified.startswith(TENSOR_NAMESPACES))


def is_tensor_parts_function(qualified: str) -> bool:
    """A torch function (by qualified name) that returns a tuple of tensors, each where its
    tensor arguments are (``TENSOR_TUPLE_FUNCTIONS``: ``torch.meshgrid``)."""
    return qualified.startswith("torch.") and \
        qualified.rpartition(".")[2] in TENSOR_TUPLE_FUNCTIONS

# Context managers / decorators that turn autograd recording off, and all that switch it.
GRAD_OFF_CALLS = frozenset(("no_grad", "inference_mode"))
GRAD_MODE_SWITCHES = GRAD_OFF_CALLS | frozenset(("set_grad_enabled", "enable_grad"))

# Legacy tensor types: torch.FloatTensor(...) builds a tensor.
TENSOR_TYPE_RE = re.compile(r"^torch\.(?:cuda\.)?[A-Z][A-Za-z]*Tensor$")
CUDA_TENSOR_TYPE_RE = re.compile(r"^torch\.cuda\.[A-Z][A-Za-z]*Tensor$")

# Tensor methods that return a tensor (so the kind flows through method chains).
TENSOR_METHODS = frozenset(
    """
    to cuda cpu float double half bfloat16 long int short bool byte char type type_as
    detach clone contiguous pin_memory requires_grad_ view view_as reshape reshape_as
    unsqueeze squeeze flatten unflatten permute transpose t expand expand_as repeat
    repeat_interleave narrow select index_select masked_fill masked_select gather scatter
    scatter_add sum mean std var prod max min amax amin argmax argmin cumsum abs neg exp log
    sqrt rsqrt sigmoid tanh relu softmax log_softmax clamp clip pow round floor ceil sign
    matmul mm bmm mul add sub div true_divide floor_divide eq ne lt le gt ge logical_not
    logical_and logical_or float_power norm flip roll tril triu diag diagonal
    add_ sub_ mul_ div_ clamp_ fill_ zero_ normal_ uniform_ copy_ masked_fill_ index_put
    nan_to_num where softplus lerp square sin cos any all
    scatter_reduce index_add index_copy index_fill masked_scatter take
    """.split()
)

# Methods that only a torch tensor has (not NumPy arrays, not PyG ``Data``/``Batch``, whose
# ``contiguous``/``detach``/``pin_memory`` return themselves, not modules): whatever the
# receiver, their result is a tensor (``img = tfms(im).unsqueeze(0)``).
TENSOR_ONLY_METHODS = frozenset(
    "unsqueeze permute masked_fill type_as view_as expand_as unflatten index_select "
    "masked_select softmax log_softmax".split())

# torch.nn.functional losses (by last name), and the names code gives a loss module.
LOSS_FUNCTIONS = frozenset(
    """
    cross_entropy nll_loss mse_loss l1_loss binary_cross_entropy binary_cross_entropy_with_logits
    smooth_l1_loss huber_loss kl_div cosine_embedding_loss margin_ranking_loss
    triplet_margin_loss ctc_loss poisson_nll_loss gaussian_nll_loss hinge_embedding_loss
    multilabel_margin_loss soft_margin_loss multi_margin_loss multilabel_soft_margin_loss
    """.split())
CRITERION_NAMES = frozenset("criterion loss_fn loss_func loss_function lossfn crit criteria".split())


# The names code gives a model (any case), and their endings (``text_model``, ``resnet``).
MODEL_NAMES = frozenset(
    "model net network classifier encoder decoder backbone generator discriminator netg netd "
    "critic".split())
MODEL_NAME_ENDINGS = ("_model", "model_", "net")


def is_model_name(name: str) -> bool:
    """A name that holds a model by convention: ``model``, ``netG``, ``text_model``,
    ``resnet``."""
    lowered = name.lower()
    return lowered in MODEL_NAMES or lowered.endswith(MODEL_NAME_ENDINGS)


def is_criterion_name(name: str) -> bool:
    """A name that holds a loss by convention: ``criterion``, ``train_criterion``, ``loss_fn``."""
    return name in CRITERION_NAMES or name.endswith("criterion") or name.endswith("loss_fn")


# torch.nn loss classes built with tensors they keep (class weights): their first parameter
# is ``weight``; and the keywords that give such a tensor to any loss class (issue 28:
# ``nn.CrossEntropyLoss(weight=torch.tensor([...]))`` called on a GPU's outputs).
WEIGHT_FIRST_LOSS_CLASSES = frozenset(
    "CrossEntropyLoss NLLLoss BCELoss BCEWithLogitsLoss MultiLabelSoftMarginLoss".split())
LOSS_TENSOR_KEYWORDS = ("weight", "pos_weight")

# The keyword and value by which a Hugging Face tokenizer, processor or feature extractor
# returns torch tensors (``tokenizer(text, return_tensors="pt")``, ``.encode(...,
# return_tensors="pt")``): made by ``torch.tensor``, on the CPU (or the default device), in a
# ``BatchEncoding`` whose ``.to(device)`` moves them all.
RETURN_TENSORS_KEYWORD = "return_tensors"
RETURN_TENSORS_TORCH = "pt"

# torch.nn layers that always hold parameters (LayerNorm and the batch norms by default).
LAYERS_WITH_WEIGHTS = frozenset(
    """
    Linear Bilinear LazyLinear Conv1d Conv2d Conv3d ConvTranspose1d ConvTranspose2d
    ConvTranspose3d Embedding EmbeddingBag LayerNorm GroupNorm BatchNorm1d BatchNorm2d
    BatchNorm3d RNN LSTM GRU RNNCell LSTMCell GRUCell MultiheadAttention PReLU RMSNorm
    Transformer TransformerEncoderLayer TransformerDecoderLayer
    """.split())

# Tensor methods whose result has as many dimensions as their receiver: casts, copies,
# transposes and elementwise math (the reshapes say their own; ``analysis.shapes``).
RANK_KEEPING_METHODS = ELEMENTWISE | frozenset(
    """float double half bfloat16 long int short bool byte char transpose t permute contiguous
    clone detach flip tril triu requires_grad_ normal_ uniform_ fill_ zero_ clamp_ to cpu
    type""".split())

# Tensor methods that say the shape of their result (``x.view(1, 3, 1, 1)``), and those that
# add one dimension.
RESHAPING_METHODS = frozenset(("view", "reshape"))
UNSQUEEZE_METHODS = frozenset(("unsqueeze", "unsqueeze_"))

# torch.nn modules that hold no parameters or buffers and behave the same in train and eval
# mode: a plain list of them misses nothing (TDL006). Loss classes are such too, unless given
# a tensor they keep (``WEIGHT_FIRST_LOSS_CLASSES`` positionally, ``LOSS_TENSOR_KEYWORDS``).
PARAMETER_FREE_MODULES = frozenset(
    """
    AvgPool1d AvgPool2d AvgPool3d MaxPool1d MaxPool2d MaxPool3d AdaptiveAvgPool1d
    AdaptiveAvgPool2d AdaptiveAvgPool3d AdaptiveMaxPool1d AdaptiveMaxPool2d AdaptiveMaxPool3d
    ReLU ReLU6 LeakyReLU ELU SELU CELU GELU SiLU Mish Sigmoid Tanh Softplus Softsign Hardtanh
    Hardswish Hardsigmoid Softmax LogSoftmax Identity Flatten Unflatten Upsample
    PixelShuffle PixelUnshuffle ZeroPad2d ConstantPad1d ConstantPad2d ReflectionPad1d
    ReflectionPad2d ReplicationPad1d ReplicationPad2d
    """.split())

# ``nn.Module`` itself, as a base class names it.
MODULE_BASE_CLASSES = frozenset(("torch.nn.Module", "torch.nn.modules.module.Module"))
# Methods by which a module registers a submodule, or any state, under a name it computes.
MODULE_REGISTERING_METHODS = frozenset(("add_module", "register_module", "setattr"))
REGISTERING_METHODS = MODULE_REGISTERING_METHODS | frozenset(
    ("register_buffer", "register_parameter"))

# torch.nn's recurrent layers: they check their input and hidden state's devices before
# anything else ("Input and hidden tensors are not at the same device"); their cells do not.
RECURRENT_MODULES = frozenset(("RNN", "LSTM", "GRU"))


def is_loss_class(qualified: str) -> bool:
    """A torch.nn loss module class: ``torch.nn.CrossEntropyLoss``."""
    return qualified.startswith("torch.nn.") and qualified.endswith("Loss")

# Tensor methods known to return something that is not a tensor.
NON_TENSOR_TENSOR_METHODS = frozenset(
    "item tolist numpy size dim ndimension numel nelement data_ptr element_size is_contiguous "
    "is_floating_point is_complex storage untyped_storage get_device stride storage_offset "
    "__len__ equal".split()
)

# Tensor methods that give a Python number or a list of them (host values, no tensor).
PYTHON_VALUE_METHODS = frozenset("item tolist size dim ndimension numel nelement".split())

# Device types of accelerators (``torch.device("xpu:0").type``): a string naming one is a device.
ACCELERATOR_DEVICE_TYPES = frozenset("cuda mps xpu hpu npu xla mtia ipu privateuseone".split())

# Tensor attributes that are tensors.
TENSOR_ATTRIBUTES = frozenset("T mT H mH data grad real imag".split())
# Tensor methods that return a named tuple of tensors on their receiver's device, and its
# fields (``x.max(dim=1).values``, ``scores.topk(k).indices``).
NAMED_TUPLE_METHODS = frozenset(
    "max min sort topk kthvalue median mode cummax cummin aminmax".split())
NAMED_TUPLE_FIELDS = frozenset(("values", "indices"))

# nn.Module methods that return the module itself (Module.to moves in place and returns self).
MODULE_SELF_METHODS = frozenset(
    "to cuda cpu float double half bfloat16 train eval requires_grad_ to_empty type "
    "share_memory apply xpu ipu mtia".split()
)

# Methods of a module that give no tensor computed on its device (its state, its structure).
MODULE_BOOKKEEPING_METHODS = MODULE_SELF_METHODS | frozenset(
    """parameters named_parameters buffers named_buffers state_dict load_state_dict modules
    named_modules children named_children register_buffer register_parameter add_module
    zero_grad extra_repr get_parameter get_buffer get_submodule""".split())

# What a tensor method gives that no longer lives on the device (or is no tensor).
OFF_ACCELERATOR_METHODS = NON_TENSOR_TENSOR_METHODS | frozenset("cpu numpy tolist item".split())

# Functions that want one argument on the CPU whatever the device of the others (their
# qualified name -> (position, keyword) of that argument): packing's lengths.
CPU_ARGUMENTS = {
    "torch.nn.utils.rnn.pack_padded_sequence": (1, "lengths"),
}

# nn.Module's mode switches: users call them at any time, often before moving the module, so
# what an override caches from the module's state stays where the module was (issue 28).
MODULE_MODE_SWITCHES = ("train", "eval")

# Classes whose subclasses (and instances) are nn.Modules. Matched on the qualified name.
MODULE_BASES = frozenset(
    """
    torch.nn.Module torch.nn.modules.module.Module torch.jit.ScriptModule
    pytorch_lightning.LightningModule pytorch_lightning.core.LightningModule
    pytorch_lightning.core.module.LightningModule lightning.LightningModule
    lightning.pytorch.LightningModule lightning.pytorch.core.LightningModule
    lightning.pytorch.core.module.LightningModule torchmetrics.Metric
    torchmetrics.metric.Metric transformers.PreTrainedModel
    transformers.modeling_utils.PreTrainedModel
    """.split()
)
LIGHTNING_BASES = frozenset(q for q in MODULE_BASES if "ightning" in q)
# A LightningModule's steps, which its Trainer runs on the module's device with the batches
# moved there (issue 28: a factory in a helper that ``training_step`` calls).
LIGHTNING_STEP_METHODS = ("training_step", "validation_step", "test_step", "predict_step")
# Lightning's Trainer (``accelerator="auto"`` by default: the GPU where there is one).
LIGHTNING_TRAINERS = frozenset(
    """
    pytorch_lightning.Trainer pytorch_lightning.trainer.Trainer lightning.Trainer
    lightning.pytorch.Trainer lightning.pytorch.trainer.Trainer
    """.split())

# Third-party namespaces in which a Capitalised callable builds an nn.Module.
MODULE_NAMESPACES = ("torch.nn.", "torchvision.models.", "torchmetrics.", "torchaudio.models.",
                     "timm.models.", "torch_geometric.nn.")
# Factory functions that build models.
# Standard-library namespaces whose classes are never nn.Modules.
NON_TORCH_STDLIB = ("abc.", "enum.", "typing.", "collections.", "dataclasses.", "argparse.",
                    "typing_extensions.", "numbers.", "json.", "pathlib.", "logging.")


def module_base(qualified: str) -> Optional[bool]:
    """Whether a class named ``qualified`` (the import path of a base class) makes its
    subclasses ``nn.Module``s: True, False, or None (unknown). The one answer the analysis
    (``KindInference.class_is_module``) and the ast prefilter (``classfacts``) both use."""
    tail = qualified.rpartition(".")[2]
    if qualified in MODULE_BASES:
        return True
    if qualified in TENSOR_CLASSES:
        return None
    if tail[:1].isupper() and qualified.startswith(MODULE_NAMESPACES):
        return True
    if qualified.startswith("transformers.") and tail.endswith(("PreTrainedModel", "Model")):
        return True
    if qualified.startswith(NON_TORCH_STDLIB):
        return False
    return None


def foreign_base(qualified: str) -> bool:
    """Whether a base class named ``qualified`` is a class of another project or file that
    ``module_base`` cannot tell about (``.base.BasePositionalEncoder``), not one of torch's own
    (``torch.autograd.Function``, ``torch.distributions.Distribution``: never modules). A class
    of such a base that shows it is a module is taken for one (TDL005, TDL006, their
    prefilter)."""
    return module_base(qualified) is None and qualified.split(".")[0] != "torch"


# Bases of a custom autograd operation: ``Op.apply(*args)`` runs its static ``forward(ctx,
# *args)`` with the arguments as they are.
AUTOGRAD_FUNCTION_BASES = frozenset(
    "torch.autograd.Function torch.autograd.function.Function".split())

MODULE_FACTORIES = frozenset(
    "timm.create_model torchvision.models.get_model torch.hub.load torch.jit.script "
    "torch.jit.trace torch.jit.load".split()
)
# Capitalised torch.nn names that are tensors, not modules (and PyG's alias of
# Optional[Tensor], which annotates most of its functions).
TENSOR_CLASSES = frozenset(
    "torch.nn.Parameter torch.nn.parameter.Parameter torch.nn.Buffer "
    "torch.nn.parameter.Buffer torch.Tensor torch.nn.UninitializedParameter "
    "torch_geometric.typing.OptTensor".split()
)

LOADER_CLASSES = frozenset(
    "torch.utils.data.DataLoader torch.utils.data.dataloader.DataLoader "
    "torch_geometric.loader.DataLoader torch_geometric.data.DataLoader".split()
)
DATASET_CLASSES = frozenset("torch.utils.data.TensorDataset".split())
# Keywords with which a pipeline is asked for host data instead of tensors (diffusers'
# ``pipe(prompt, output_type="np")``: NumPy arrays or PIL images, never a device tensor).
HOST_OUTPUT_KEYWORDS = {"output_type": frozenset(("np", "numpy", "pil"))}
# Python's factories of an empty container (``defaultdict(list)``): what the code then fills
# it with is all it holds (``Placement.gives_host_values``: a log of ``.item()`` floats).
EMPTY_CONTAINER_FACTORIES = frozenset(("collections.defaultdict", "collections.OrderedDict"))
# Attributes of Lightning's ``ModelCheckpoint`` (``trainer.checkpoint_callback``) that name a
# checkpoint this process wrote: empty until the run's own ``trainer.fit`` saves one, so a
# load of one reads what the same run wrote (TDL003's round trips).
RUN_CHECKPOINT_PATHS = frozenset(("best_model_path", "last_model_path", "kth_best_model_path"))
# Calls that ask whether CUDA is there (also imported by name: ``from torch.cuda import
# is_available``): a test that makes one is a guard.
CUDA_AVAILABILITY_CHECKS = frozenset(
    "torch.cuda.is_available torch.cuda.device_count torch.cuda.is_initialized".split())
# Calls whose value differs from run to run (a timestamp, a random id): a file whose name is
# built from one can only be read by the run that wrote it (TDL003's round trips:
# ``f"early_stop_{datetime.datetime.now():%H-%M-%S}.pth"``). Python's, not torch's.
RUN_STAMP_CALLS = frozenset(
    "datetime.datetime.now datetime.datetime.utcnow time.time time.time_ns time.strftime "
    "time.localtime time.gmtime uuid.uuid1 uuid.uuid4".split())
# Keywords with which a call is told the device to put what it makes on: a loader its
# batches (torchtext's ``device``, graphlearn's ``to_device``, DGL's ``DataLoader(...,
# device=)``), a helper what it is given (``send_to_device(batch, target_device=d)``). Not
# ``pin_memory_device``: pinned batches stay on the host.
DEVICE_KEYWORDS = frozenset("device to_device target_device output_device".split())
# Methods of a data pipeline that move every item it yields to the device they are given:
# DGL GraphBolt's ``datapipe = datapipe.copy_to(device)`` (a ``gb.DataLoader`` over it yields
# minibatches on that device).
PIPELINE_MOVE_METHODS = frozenset(("copy_to",))
# Methods of a Hugging Face ``datasets.Dataset`` that make it yield tensors on the device given
# by their ``device=`` keyword: ``ds.set_format(type="torch", device="cuda")`` (in place) and
# ``ds = ds.with_format("torch", device=device)`` (a copy).
FORMAT_DEVICE_METHODS = frozenset(("set_format", "with_format"))

# Hugging Face objects whose outputs (BatchEncoding) move in place with .to().
TOKENIZER_NAME_RE = re.compile(r"(Tokenizer|Processor|FeatureExtractor|ImageProcessor)")
# Hugging Face names that are neither models nor tokenizers.
NON_MODEL_PRETRAINED_RE = re.compile(r"(Config|Arguments|GenerationConfig)$")
TOKENIZER_METHODS_RETURNING_ENCODING = frozenset(
    "encode_plus batch_encode_plus pad prepare_seq2seq_batch __call__".split()
)
# Attributes of a Hugging Face ModelOutput that hold tensors.
MODEL_OUTPUT_TENSORS = frozenset(
    "logits loss last_hidden_state pooler_output start_logits end_logits".split()
)

# Builtins: calling them gives a value that is neither a tensor nor a module.
NON_TENSOR_BUILTINS = frozenset(
    "int float str bool bytes list dict set frozenset tuple len range enumerate zip sorted "
    "reversed repr format print open isinstance issubclass hasattr getattr id hash type "
    "object sum min max abs round map filter any all vars dir input ord chr hex bin oct".split()
)

# Loop wrappers that yield the items of their first argument (enumerate and zip are special).
# (``log_every`` is the MetricLogger of detr, dino, mae and torchvision's references.)
TRANSPARENT_ITER_WRAPPERS = frozenset(
    "tqdm iter trange_ track progress_bar islice auto_tqdm log_every".split())
# All the wrappers a loop over a loader goes through (``pbar = tqdm(enumerate(loader))``).
LOADER_WRAPPERS = frozenset(("enumerate", "zip")) | TRANSPARENT_ITER_WRAPPERS

# Words (lower case) in the text of a loop over anything but a data loader (``range(n)``, a
# list of batches, an iterator, ``while``) that TDL010 asks for (issue 28): such a loop is
# judged only where it names a loss (``total += loss``, ``criterion(out, y)``); loops that sum
# other things are everywhere in numeric code (torch's own sources).
LOSS_WORDS = ("loss", "criterion")
# What else such a loop's text holds where TDL010 judges it by what it does (issue 28): it runs
# backward, or computes a functional loss whose name has no "loss" in it. (TDL010's ast
# prefilter asks; the rule decides by the analysis. A loop that draws its batches from a
# loader, ``next(batches)``, is in a file that names one.)
LOOP_EVIDENCE_WORDS = ("backward", "cross_entropy", "kl_div")
# ... and as its text calls them (``loss.backward()``, ``torch.autograd.grad(...)``, ``F.kl_div(``)
LOOP_EVIDENCE_CALLS = (".backward(", "autograd.grad(", "cross_entropy(", "kl_div(")

# Functions that load a serialized object and accept map_location, with its positional index.
# The last names of MAP_LOCATION_FUNCTIONS: what a call must be named to be one of them.
LOAD_CALL_NAMES = ("load", "load_state_dict_from_url", "load_url")
MAP_LOCATION_FUNCTIONS = {
    "torch.load": 1,
    "torch.serialization.load": 1,
    "torch.jit.load": 1,
    "torch.jit._serialization.load": 1,
    "torch.hub.load_state_dict_from_url": 2,
    "torch.utils.model_zoo.load_url": 2,
}
# Calls that take a device *type name* ("cuda") and accept it on a machine without CUDA: they
# only warn, or answer a question. Each is called with "cuda" on a CPU-only build of torch in
# tests/runtime/test_device_type_apis.py.
DEVICE_TYPE_TOLERANT_CALLS = frozenset(
    """
    torch.autocast torch.amp.autocast torch.amp.autocast_mode.autocast torch.get_autocast_dtype
    torch.is_autocast_enabled torch.set_autocast_enabled torch.set_autocast_dtype
    torch.amp.is_autocast_available torch.amp.GradScaler torch.amp.grad_scaler.GradScaler
    torch.cuda.amp.GradScaler torch.get_device_module
    torch.cuda.max_memory_allocated torch.cuda.memory_allocated torch.cuda.memory_reserved
    torch.cuda.max_memory_reserved torch.cuda.memory_stats
    """.split()
)
SAVE_FUNCTIONS = frozenset("torch.save torch.serialization.save torch.jit.save".split())
# Where PyTorch publishes the release weights of its domain libraries (torchvision's
# ``mobilenet_v2-b0353104.pth``, torchaudio's): saved with CPU storages, which is why
# torchvision's own model builders load them with ``load_state_dict_from_url`` and no
# ``map_location`` on CPU-only machines (TDL003 needs no map_location for them).
# Published weights known to hold CPU storages: torchvision's; Cadene's pretrainedmodels and
# lukemelas' EfficientNet-PyTorch releases, which those libraries load with model_zoo.load_url
# and no map_location on CPU-only machines (MONAI's CPU tests load them too; the reviewers'
# verdicts on MONAI, DeepLabV3Plus and SSL4MIS).
CPU_RELEASE_URL_PREFIXES = ("https://download.pytorch.org/models/",
                            "http://data.lip6.fr/cadene/pretrainedmodels/",
                            "https://github.com/lukemelas/EfficientNet-PyTorch/releases/download/")
# Methods that put what they are given into a list, dict or set, with the position of what
# they put (TDL003 and the project index judge a saved container by what goes into it), and
# calls that read a container without filling it.
CONTAINER_FILLERS = {"append": 0, "extend": 0, "insert": 1, "add": 0, "update": 0,
                     "setdefault": 1}
CONTAINER_READERS = frozenset(("save", "len", "print", "enumerate", "zip", "sorted", "str",
                               "repr", "list", "tuple", "dict", "set", "sum", "min", "max",
                               "isinstance"))
# Calls that spell the path they are given another way, naming the same file
# (``Targets.fixed_path``: a checkpoint the project ships beside the code).
PATH_SPELLINGS = frozenset(("os.path.abspath", "os.path.realpath", "os.path.normpath",
                            "os.fspath", "pathlib.Path", "pathlib.PurePath", "str"))

DTYPE_NAMES = frozenset(
    """
    float float16 float32 float64 half double bfloat16 int int8 int16 int32 int64 long short
    uint8 bool complex64 complex128 cfloat cdouble float8_e4m3fn float8_e5m2
    """.split()
)

# The last word of a name that by convention holds a device (``target_device``, ``dev``); not
# ``gpu``, which names a GPU's index (``args.gpu``): ``map_location=gpu`` would fail.
DEVICE_NAME_WORDS = frozenset(("device", "dev"))
# Words of a name that holds a length or a size (``lengths``, ``input_lengths``, ``src_len``,
# ``batch.seq_lens``): by convention a value that stays on the CPU beside tensors on a device,
# since ``pack_padded_sequence`` and ``ctc_loss`` take their lengths there (``names_a_length``).
LENGTH_WORDS = frozenset("len lens length lengths size sizes seq_len seq_lens num".split())

CUDA_DEVICE_RE = re.compile(r"^cuda(?::\d+)?$")

# ``torch.accelerator.current_accelerator()``: the accelerator's device, or None where torch has
# none (a CPU-only build; with ``check_available=True`` also where no device is present).
ACCELERATOR_MODULE = "torch.accelerator"  # from torch 2.6 on: ``hasattr(torch, "accelerator")``
CURRENT_ACCELERATOR = f"{ACCELERATOR_MODULE}.current_accelerator"
# What a dereference of its None raises (TDL012).
NONE_DEREFERENCE_ERROR = "AttributeError"

# -- Names the rules and their prefilters ask by (each once, here: issue 26) ----------------

# Moves: the three methods whose result is a copy on another device (TDL001, the prefilters),
# those that may go to an accelerator, and the two whose device their argument says.
MOVE_METHODS = ("to", "cuda", "cpu")
ACCELERATOR_MOVE_METHODS = frozenset(("to", "cuda"))
ARGUMENT_DEVICE_METHODS = frozenset(("cpu", "to"))
# Calls whose last name gives a device, or a value on one (``torch.device``, ``.to``, ``.cuda``).
DEVICE_MAKING_CALLS = frozenset(("device", "to", "cuda"))
# Keywords of ``.to()`` that say where and as what (TDL009), and those of a factory that make
# a CPU creation deliberate: a CPU generator, a pinned staging buffer, an output tensor.
MOVE_KEYWORDS = frozenset(("device", "dtype"))
DELIBERATE_CPU_KEYWORDS = frozenset(("generator", "pin_memory", "out", "device"))
# Calls whose last name may take a device: ``torch.device``, ``.to``, the loads.
DEVICE_TAKING_CALL_NAMES = ("device", "to", "set_default_device") + LOAD_CALL_NAMES
# Tensor methods that give the receiver in parts; copies of it on the host (NumPy, Python
# values, ``.cpu()``); and the calls after which a value has no autograd history.
SPLITTING_METHODS = frozenset("chunk split unbind".split())
# torch functions that return a tuple of tensors, each where their tensor arguments are and
# with at least the dimensions of one of them (``yv, xv = torch.meshgrid(torch.arange(ny),
# torch.arange(nx))``: a detection head's grid; not ``unbind``, which drops one).
TENSOR_TUPLE_FUNCTIONS = frozenset("meshgrid broadcast_tensors split chunk tensor_split".split())
HOST_COPY_METHODS = frozenset("cpu numpy tolist item".split())
# Functions that apply a function to every tensor of a collection and return the result
# (``apply_to_collection(metrics, Tensor, lambda t: t.cpu())``: Lightning's,
# ``torch.utils._pytree.tree_map(fn, tree)``, the builtin ``map``): given a host copy, the
# whole result is host data. By last name: the projects' own spellings vary.
COLLECTION_MAPPERS = frozenset("apply_to_collection tree_map tree_map_only map".split())
# An in-memory file: ``torch.save(x, buffer)`` to one, ``torch.load(io.BytesIO(data))``.
MEMORY_BUFFERS = frozenset(("io.BytesIO",))
DETACHING_METHODS = frozenset("detach detach_ item tolist".split())
# Tensor methods that may stand beside ``.cpu()`` in a chain that copies a value to the host
# before ``.numpy()`` (``y.detach().cpu().float().numpy()``: TDL008's twin evidence).
HOST_COPY_CHAIN_METHODS = frozenset(
    "detach clone contiguous float double long int bool half squeeze flatten view reshape".split())
# torch functions that join a list of tensors; the transposes a tensor has as attributes.
JOINING_FUNCTIONS = frozenset(("cat", "stack"))
# torch functions that join a sequence of tensors, given as their first argument (TDL011: the
# pieces a list collects must share a device).
SEQUENCE_JOINING_FUNCTIONS = frozenset(
    "cat concat concatenate stack hstack vstack dstack column_stack row_stack".split())


def is_sequence_join(qualified: str) -> bool:
    """``torch.cat`` / ``torch.stack`` and the like, by qualified name (not ``torch.x.cat``)."""
    head, _, tail = qualified.rpartition(".")
    return head == "torch" and tail in SEQUENCE_JOINING_FUNCTIONS

# list methods that take pieces out of a list (what a list collects is then unknown)
LIST_REMOVING_METHODS = frozenset("pop clear remove".split())
TRANSPOSE_ATTRIBUTES = frozenset(("T", "mT"))

# What only a tensor does among the things whose .to()/.cuda() returns a copy (a module has
# no .shape, .dim() or .view(); a NumPy array has no .to()), and everything a tensor has that
# code reaches by attribute (TDL001).
TENSOR_RECEIVER_METHODS = frozenset(
    "size dim view unsqueeze squeeze permute transpose reshape numel item numpy tolist "
    "contiguous detach clone flatten masked_fill expand expand_as view_as index_select "
    "narrow type_as new_zeros new_ones new_full new_empty".split())
TENSOR_RECEIVER_ATTRIBUTES = frozenset("shape ndim dtype is_cuda T mT grad data".split())
TENSOR_MEMBERS = (TENSOR_METHODS | NON_TENSOR_TENSOR_METHODS | TENSOR_ATTRIBUTES
                  | TENSOR_RECEIVER_METHODS | TENSOR_RECEIVER_ATTRIBUTES
                  | frozenset("device requires_grad backward grad_fn is_leaf half float double "
                              "long int bool".split()))

# Autograd history (TDL010): tensor methods whose result keeps the receiver's history (and, for
# the binary ones, the argument's; not max/min/topk/sort, which return indices too, not integer
# casts); torch functions (by last name) whose result keeps their tensor arguments' history;
# attributes of a value with history that hold tensors with it; what drops it.
HISTORY_KEEPING_METHODS = frozenset(
    """
    float double half bfloat16 to cuda cpu view view_as reshape reshape_as squeeze unsqueeze
    flatten unflatten permute transpose t contiguous clone sum mean std var prod norm logsumexp
    softmax log_softmax sigmoid tanh relu exp log log1p abs pow sqrt rsqrt neg reciprocal square
    mul add sub div true_divide matmul mm bmm clamp clip expand expand_as repeat flip roll
    narrow select gather index_select masked_select masked_fill chunk split unbind squeeze_
    cumsum lerp where type_as nan_to_num diagonal tril triu
    """.split())
HISTORY_KEEPING_FUNCTIONS = frozenset(
    """
    cat concat concatenate stack hstack vstack sum mean std var prod norm logsumexp softmax
    log_softmax sigmoid tanh relu exp log log1p abs pow sqrt neg square matmul mm bmm einsum
    mul add sub div flatten squeeze unsqueeze reshape transpose permute clamp clip where
    cumsum chunk split unbind gather index_select masked_select diagonal tril triu
    """.split())
HISTORY_KEEPING_ATTRIBUTES = frozenset("T mT H mH real imag".split())
HISTORY_DROPPING_METHODS = frozenset("item tolist numpy detach argmax argmin".split())
HISTORY_DROPPING_BUILTINS = frozenset("float int round str bool len print".split())

# Operands on one device (TDL011): torch functions whose positional tensor arguments (or the
# elements of a list of them) must share one, the same among torch.nn.functional's, and what
# may leave a 0-dim tensor (which combines with any device): reductions and the like.
SAME_DEVICE_FUNCTIONS = frozenset(
    """cat concat concatenate stack hstack vstack dstack matmul mm bmm add sub subtract mul
    multiply div divide true_divide maximum minimum where cdist dot inner outer""".split())
SAME_DEVICE_FUNCTIONAL = frozenset(
    """linear bilinear mse_loss l1_loss smooth_l1_loss huber_loss cross_entropy nll_loss
    binary_cross_entropy binary_cross_entropy_with_logits kl_div cosine_similarity
    pairwise_distance""".split())
MAY_BE_SCALAR_METHODS = frozenset(
    """sum mean prod max min amax amin norm std var median mode all any argmax argmin logsumexp
    dot vdot count_nonzero trace det logdet squeeze item nansum nanmean numel dist""".split())
# Tensor methods whose result has at least one dimension, whatever their receiver had: no
# 0-dim tensor comes out of them (``torch.tensor(ids).unsqueeze(0)``; ``flatten``, ``ravel``
# and ``nonzero`` of a 0-dim tensor give shapes (1,) and (1, 0); ``repeat`` has a dimension
# per size given).
DIMENSION_ADDING_METHODS = frozenset(("unsqueeze", "flatten", "ravel", "nonzero", "repeat"))
# Tensor methods given a shape: ``x.view(-1, 1)``, ``x.reshape(n, 4)`` (two or more sizes, or
# one literal size) have a dimension per size (only ``view(())`` makes a 0-dim tensor).
RESHAPING_METHODS = frozenset(("view", "reshape"))
# Tensor methods that return (values, indices) of their receiver's shape, or those indices.
SORTING_METHODS = frozenset(("sort", "argsort"))

# nn.Module state (the ``modules`` provider): torch functions given an index (a CPU index into
# a device tensor works), tensor methods that combine their receiver with their argument, and
# tensor methods that numpy arrays, lists and numbers do not have (a parameter used with one
# of them is a tensor).
INDEX_TAKING_FUNCTIONS = frozenset(
    "index_select gather scatter scatter_add take take_along_dim searchsorted bucketize "
    "index_add index_copy index_fill index_put embedding one_hot".split())
# ... of which those that refuse a CPU input given an index on an accelerator (as functions,
# tensor methods and in place: ``self.alpha.gather(0, targets)``, ``torch.zeros(n,
# k).scatter_(1, labels, 1)``; checked under the pretend accelerator: "Expected all tensors to
# be on the same device, but got index is on cuda:0"); ``index_put_`` takes such indices.
CPU_INPUT_DEVICE_INDEX_REFUSING = INDEX_TAKING_FUNCTIONS - {"index_put", "one_hot", "embedding"}
# Tensor methods (and the torch functions of the same name, whose input comes first) that take
# an index or a mask tensor and check its device against their input's: a CPU index into a tensor
# on an accelerator fails here, where ``x[index]`` works (``q(obs).gather(1, actions)`` of a DQN
# given the replay buffer's CPU actions), and so does an index on an accelerator into a CPU
# tensor. By name: the index's position among the method's positional arguments, its keyword,
# and the word torch's error names it by ("got index is on cpu, different from other tensors on
# cuda:0"; None: the generic "found at least two devices"). Recorded on an H200, both ways, in
# tests/runtime/data/gpu/opinfo-h200.jsonl. (``take_along_dim`` words its error otherwise, and
# ``searchsorted``/``bucketize`` take no index: not here.)
DEVICE_CHECKED_INDEX_ARGUMENTS = {
    **{name: (1, "index", "index") for name in (
        "gather scatter scatter_ scatter_add scatter_add_ scatter_reduce scatter_reduce_ "
        "index_select index_add index_add_ index_copy index_copy_").split()},
    "index_fill": (1, "index", None), "index_fill_": (1, "index", None),
    "take": (0, "index", "index"), "put": (0, "index", "index"), "put_": (0, "index", "index"),
    "masked_select": (0, "mask", "mask"), "masked_scatter": (0, "mask", "mask"),
    "masked_scatter_": (0, "mask", "mask"),
}


def updates_in_place(method: str) -> bool:
    """A tensor method that writes into its receiver, by torch's naming (``scatter_``,
    ``add_``; not the dunders): moving the receiver at the call would write into a copy."""
    return method.endswith("_") and not method.startswith("__")


# The parameters and buffers torch.nn's layers register under these names (``nn.Linear``'s
# ``weight``/``bias``, ``nn.BatchNorm``'s running statistics, ``nn.MultiheadAttention``'s
# packed projection): moved with their module.
MODULE_STATE_ATTRIBUTES = frozenset(
    "weight bias running_mean running_var in_proj_weight in_proj_bias".split())
# Keyword arguments of torch functions and losses that take tensors on their input's device
# (``F.cross_entropy(out, y, weight=w)``, ``F.binary_cross_entropy_with_logits(...,
# pos_weight=p)``): TDL011 reads them as operands.
TENSOR_KEYWORD_ARGUMENTS = frozenset("input target weight pos_weight other mask".split())
COMBINING_METHODS = frozenset(
    """
    add sub mul div matmul mm bmm masked_fill masked_fill_ where add_ sub_ mul_ div_ eq ne lt
    le gt ge lerp pow maximum minimum logical_and logical_or addcmul baddbmm mv dot outer
    """.split())
# Tensor methods that numpy arrays lack whose index argument (the second, or ``index=``) is a
# tensor: a parameter given there is one (``self.alpha.gather(0, target)`` of a focal loss).
TENSOR_INDEX_METHODS = frozenset(
    "gather scatter scatter_ scatter_add scatter_add_ index_select index_add index_add_ "
    "index_copy index_copy_ index_fill index_fill_".split())
TENSOR_PARAMETER_METHODS = frozenset(
    """
    size dim unsqueeze permute contiguous masked_fill masked_fill_ type_as view_as expand
    expand_as softmax log_softmax new_zeros new_ones new_empty new_full new_tensor chunk
    unbind bmm mm float half bfloat16 long bool
    """.split())

# Tensor methods whose GPU kernel checks the mask's device itself, with its own words
# (``modules.MASK_ERROR``) instead of the dispatcher's "Expected all tensors ..."
MASK_CHECKING_METHODS = frozenset(("masked_fill", "masked_fill_"))

# Where a module is moved (``modules``): the calls, in the order their sites are read, and
# those that move without naming a device (``.cuda()``, the data-parallel wrappers).
MODULE_MOVING_CALLS = ("cuda", "to", "set_default_device", "DataParallel",
                       "DistributedDataParallel")
# The data-parallel wrappers: they move (scatter) the inputs they are given.
SCATTERING_WRAPPERS = ("DataParallel", "DistributedDataParallel")
# The wrappers whose forward moves the inputs it is given to the wrapped model's device, by
# class name: the data-parallel ones and torch's FSDP (``_root_pre_forward`` calls
# ``_to_kwargs(args, kwargs, compute_device)``). The project index records a model passed
# wrapped in one of them (``project_index.Summary["calls"]``' ``wrapped``).
INPUT_MOVING_WRAPPERS = frozenset(SCATTERING_WRAPPERS + ("FullyShardedDataParallel",))
MODULE_MOVING_CALLS_WITHOUT_DEVICE = frozenset(("cuda",) + SCATTERING_WRAPPERS)
PARAMETER_CLASS_NAMES = frozenset(("Parameter", "UninitializedParameter"))
# ``nn.Parameter(t)``: registered where assigned to a module's attribute, a plain tensor inside a
# list or dict (``nn.ParameterList`` / ``nn.ParameterDict`` register those).
PARAMETER_CLASSES = frozenset(("torch.nn.Parameter", "torch.nn.parameter.Parameter"))
# Builtins whose result of plain values (constants, a method's parameters) is no tensor:
# ``tuple(shape)``, ``int(dim)`` (TDL005's ast prefilter skips such attributes).
PLAIN_BUILTINS = frozenset(("tuple", "int", "float", "bool", "str", "len"))
# A tensor's attributes that say where it is; methods that give it another type (or device).
DEVICE_ATTRIBUTES = frozenset(("device", "is_cuda"))
RETYPING_METHODS = frozenset(("to", "type_as", "type"))
# Tensor methods whose result is on the device of the tensor they are given, not their
# receiver's: ``torch.eye(n).type_as(x)`` is where ``x`` is (and of its dtype).
OTHER_TENSORS_DEVICE_METHODS = frozenset(("type_as",))
# A tensor's attributes that are no tensor (``kinds``).
NON_TENSOR_TENSOR_ATTRIBUTES = frozenset(("shape", "dtype", "ndim", "is_cuda", "requires_grad"))
# What a module's iterators give: its tensors, its (name, tensor) pairs, its submodules.
MODULE_TENSOR_ITERATORS = frozenset(("parameters", "buffers"))
MODULE_NAMED_TENSOR_ITERATORS = frozenset(("named_parameters", "named_buffers"))
MODULE_SUBMODULE_ITERATORS = frozenset(("children", "modules"))
# Decorators that leave a function's code to run as written (the builder looks through them).
TRANSPARENT_DECORATORS = frozenset(
    "no_grad inference_mode enable_grad staticmethod classmethod wraps lru_cache cache "
    "compile export autocast property cached_property".split())
# ``torch.device("cuda").type`` and ``.index`` are only a string and a number; the calls that
# register a module's tensor; those given a tensor type (``x.type(torch.cuda.FloatTensor)``).
DEVICE_PART_ATTRIBUTES = frozenset(("type", "index"))
REGISTERING_TENSOR_CALLS = frozenset(("register_buffer", "register_parameter"))
TENSOR_TYPE_TAKING_CALLS = frozenset(("type", "set_default_tensor_type"))
# Calls that fail where CUDA is not there, whatever they are given: a statement that makes one
# unconditionally stops a run without CUDA before the code after it (``Guards.after_cuda_use``).
CUDA_REQUIRING_CALLS = frozenset(("torch.cuda.set_device", "torch.cuda.init"))
# Command-line parsers built from a dataclass of settings: a field's default is an option's
# default, as argparse's ``default=`` is (pyrallis' ``@pyrallis.wrap()`` of a function taking
# the class, ``pyrallis.parse(config_class=C)``, ``tyro.cli(C)``, ``HfArgumentParser(C)``).
CONFIG_CLI_PARSERS = frozenset((
    "pyrallis.wrap", "pyrallis.parse", "tyro.cli", "tyro.conf", "transformers.HfArgumentParser",
    "simple_parsing.parse", "simple_parsing.ArgumentParser"))
# Lightning's launchers given ``accelerator="cuda"`` (or ``"gpu"``) raise where CUDA is not there
# ("CUDAAccelerator can not run on your system"): made unconditionally, they stop such a run too.
ACCELERATOR_LAUNCHERS = frozenset((
    "lightning.Fabric", "lightning.fabric.Fabric", "lightning_fabric.Fabric", "lightning.Trainer",
    "lightning.pytorch.Trainer", "pytorch_lightning.Trainer"))
# Device strings whose mention makes a condition a device guard (``guards``), besides CUDA's.
GUARD_DEVICE_STRINGS = frozenset(("cpu", "mps", "xpu"))
# Strings and tensor methods whose test only passes where CUDA is there: the NCCL backend
# (``torch.distributed.get_backend() == "nccl"``) and pinned memory (``t.is_pinned()``, which
# only an accelerator's runtime makes): code under them is guarded.
CUDA_ONLY_BACKENDS = frozenset(("nccl",))
ACCELERATOR_ONLY_TESTS = frozenset(("is_pinned",))


# -- What a factory makes: a tensor with a dimension, or one that may be 0-dim ---------------
# (issue 26: TDL005, TDL007, TDL011 and the prefilter asked this four ways.) The callers see
# their own trees (LibCST, Python's ast); each argument reaches this function as one of:
ITEMS = "items"                  # a list or tuple display with elements, none a literal 0
ZERO_ITEMS = "zero items"        # one with a literal 0 among them (an empty tensor)
EMPTY = "empty"                  # ``()``, ``[]``
COMPREHENSION = "comprehension"  # ``[f(x) for x in xs]``
ZERO = "zero"                    # the literal 0
NUMBER = "number"                # another integer literal
EXPRESSION = "expression"        # a name, attribute, call, subscript, arithmetic
OTHER = "other"


def factory_dimensions(name: str, positional, size_keyword=()) -> Optional[bool]:
    """Whether the torch factory ``name`` (its last name), called without ``device=`` with
    arguments of these kinds (``positional``; ``size_keyword``: the ``size=`` argument, if
    any), makes a tensor with at least one dimension (True), one that may be 0-dim (False,
    which combines with a tensor on any device), or whether its arguments do not tell (None).
    """
    if name in ALWAYS_SHAPED_FACTORIES or name in INDEX_FACTORIES:
        return True
    if name in LEGACY_TENSOR_TYPES:
        return True if positional else None  # ``torch.Tensor(3)``: 1-dim, whatever the argument
    if name in SCALAR_FACTORIES:  # the data's shape: only a list display shows one
        # (``torch.tensor([])`` has one dimension, of size 0: the accumulator of an
        # evaluation loop, ``preds = torch.cat((preds, out))``, fails with the first batch)
        return bool(positional) and positional[0] in (ITEMS, ZERO_ITEMS, COMPREHENSION, EMPTY)
    if name in LIKE_FACTORIES:
        return None if positional else False  # (another tensor's shape)
    if name == "randint":
        size = size_keyword[0] if size_keyword else positional[-1] if positional else EMPTY
        return True if size in (ITEMS, ZERO_ITEMS) else False if size == EMPTY else None
    if name in SIZE_FACTORIES:
        sizes = list(positional[:1] if name == "full" else positional) or list(size_keyword)
        if len(sizes) != 1:
            return len(sizes) > 1
        return False if sizes[0] == EMPTY else None if sizes[0] in (OTHER, COMPREHENSION) \
            else True
    return None


def factory_sizes(name: str, positional, size_keyword=()) -> list:
    """The arguments of a factory that are its sizes (kinds, as ``factory_dimensions`` takes
    them): what TDL007 reads for a literal 0 (an empty tensor is a placeholder)."""
    if name == "randint":
        return list(size_keyword) or [p for p in positional if p in (ITEMS, ZERO_ITEMS, EMPTY)]
    if name in SIZE_FACTORIES:
        return list(positional[:1] if name == "full" else positional) or list(size_keyword)
    return []


# Functions outside torch that read their array arguments as NumPy arrays (``np.asarray``
# inside), so that a tensor on an accelerator given to them fails as ``np.asarray(t)`` does:
# TDL008 (issue 28: ganomaly's ``roc_curve(labels, scores)`` of GPU tensors). NumPy's own
# conversions, every function of scikit-learn's metrics module, pyplot's plotting functions
# (the data they are given; not ``ax.plot``, whose receiver is unknown), pandas' DataFrame
# and Series.
NUMPY_CONVERSIONS = frozenset(("numpy.array", "numpy.asarray"))
NUMPY_CONVERSION_NAMES = tuple(sorted(name.rpartition(".")[2] for name in NUMPY_CONVERSIONS))
# NumPy functions that read a Python list through ``np.asarray`` (each element's
# ``__array__``, which is ``Tensor.numpy()``): a list of tensors on an accelerator given to
# one fails as ``np.asarray(t)`` does (``np.mean(losses)`` of ``losses.append(loss)``). Given
# one tensor instead, most of them call its own method (``np.mean(t)`` is ``t.mean()``), so
# only a list counts (TDL008).
NUMPY_LIST_READERS = NUMPY_CONVERSIONS | frozenset(
    "numpy." + name for name in """mean sum std var max min median average concatenate stack
    vstack hstack prod cumsum""".split())
NUMPY_LIST_READER_NAMES = tuple(sorted(name.rpartition(".")[2] for name in NUMPY_LIST_READERS))
# NumPy functions that convert a tensor given them alone through ``np.asarray`` (its
# ``__array__``, which is ``Tensor.numpy()``), so that one on an accelerator fails with "can't
# convert cuda:0 device type tensor to numpy": ``np.argmax(out, axis=1)`` of a model's output,
# ``np.round(pred)``, ``np.exp(log_probs)``, ``np.save(path, features)`` (each checked under
# the pretend accelerator; ``np.mean(t)``, ``np.sum(t)``, ``np.max(t)`` call the tensor's own
# method instead, and ``np.squeeze(t)`` works). They read a list of such tensors too. NumPy's
# scalar types convert the same way (``np.uint8(255 * mask)`` of a Grad-CAM map, devreports3).
NUMPY_TENSOR_READERS = frozenset("numpy." + name for name in """
    argmax argmin argsort round around exp log log1p expm1 sqrt square abs absolute sign floor
    ceil tanh sin cos where unique sort transpose isnan isinf isfinite histogram bincount
    count_nonzero ravel copy nan_to_num rint median average cumsum argwhere fliplr rot90 diag
    trace atleast_2d ascontiguousarray maximum minimum dot matmul power multiply add subtract
    divide allclose isclose equal greater less save savetxt
    float16 float32 float64 uint8 int8 int16 int32 int64""".split())
NUMPY_TENSOR_READER_NAMES = tuple(sorted(name.rpartition(".")[2] for name in NUMPY_TENSOR_READERS))
# The list methods that add tensors to a list (``append(t)``; ``extend(t)`` adds ``t``'s rows,
# on ``t``'s device).
LIST_ADDING_METHODS = ("append", "extend")
HOST_READING_MODULES = ("sklearn.metrics", "matplotlib.pyplot", "pandas")
# pandas' containers convert what they are given through NumPy (``pd.DataFrame(t)`` of a GPU
# tensor: "can't convert cuda:0 device type tensor to numpy" under the pretend accelerator)
PANDAS_CONSTRUCTORS = frozenset(("pandas.DataFrame", "pandas.Series"))
PYPLOT_DATA_FUNCTIONS = frozenset((
    "plot", "scatter", "imshow", "hist", "bar", "barh", "errorbar", "fill_between", "matshow",
    "pcolormesh", "contour", "contourf", "stem", "boxplot", "hist2d", "semilogy",
    "semilogx", "loglog"))


def reads_host_arrays(qualified: str) -> bool:
    """Whether the function ``qualified`` (a qualified name) reads its array arguments through
    NumPy: ``numpy.asarray``, ``sklearn.metrics.roc_auc_score``, ``matplotlib.pyplot.imshow``,
    ``pandas.DataFrame``."""
    if qualified in NUMPY_CONVERSIONS or qualified.startswith("sklearn.metrics.") or \
            qualified in PANDAS_CONSTRUCTORS:
        return True
    module, _, name = qualified.rpartition(".")
    return module == "matplotlib.pyplot" and name in PYPLOT_DATA_FUNCTIONS
