import struct
import numpy as np
import torch


def writeString(fo, s):
    fo.write(struct.pack('i', len(s)))
    fo.write(s.encode())


def tofile(exportPath, model, dtype="float16"):
    dict = model.state_dict()
    fo = open(exportPath, "wb")
    fo.write(struct.pack('i', len(dict)))
    ori_np_data_type = np.float16 if dtype == "float16" else np.float32
    for key in dict:
        cur = dict[key].cpu().numpy().astype(ori_np_data_type)
        writeString(fo, key)
        fo.write(struct.pack('i', len(cur.shape)))
        for i in cur.shape:
            fo.write(struct.pack('i', i))
        fo.write(cur.data)
    fo.close()


if __name__ == "__main__":
    device = "cuda" if torch.cuda.is_available() else "cpu"
    model = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Linear(8, 2)).to(device)
    model = model.eval()
    tofile("baichuan-fp16.flm", model, dtype="float16")
