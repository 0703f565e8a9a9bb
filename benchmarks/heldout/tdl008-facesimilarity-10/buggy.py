import numpy as np
import torch


def tensor2cv2(image: torch.Tensor) -> np.ndarray:
    if image.dim() == 4:
        image = image.squeeze()
    npimage = image.numpy()
    cv2image = np.uint8(npimage * 255 / npimage.max())
    return cv2image[:, :, ::-1]


class FaceSimilarity:
    def face_similarity(self, image, reference_image):
        image_np = tensor2cv2(image)
        reference_np = tensor2cv2(reference_image)
        return (float(np.abs(image_np.astype(float) - reference_np.astype(float)).mean()),)


device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
image = torch.rand(1, 16, 16, 3).to(device)
reference = torch.rand(1, 16, 16, 3).to(device)
print(FaceSimilarity().face_similarity(image, reference))
