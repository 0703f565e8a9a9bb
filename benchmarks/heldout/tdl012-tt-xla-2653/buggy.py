import torch


def masked_is_available():
    try:
        acc = torch.accelerator.current_accelerator()
        # current_accelerator() returns device(type='jax'), need to check .type
        if acc.type == "jax":
            return False
    except RuntimeError:
        return False
    return torch.cuda.is_available()


print(masked_is_available())
