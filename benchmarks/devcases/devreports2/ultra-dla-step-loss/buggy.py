# ULTRA_pytorch issue 6 ("Memory Leakage in DLA implementation": DLA.train returns self.loss,
# which main.py adds to its running loss; fixed in 9934f91 with `self.loss.item()`): dla.py's
# DenoisingNet and DLA with base_algorithm.py, DNN.py and main.py's loop, minimised (one hidden
# layer, random click logs, three steps; the loop prints its checkpoint losses).
import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

device = torch.device('cuda')

def softmax_cross_entropy_with_logits(logits, labels):
    return torch.sum(- labels * F.log_softmax(logits, -1), -1)

class DNN(nn.Module):
    def __init__(self, feature_size):
        super(DNN, self).__init__()
        self.sequential = nn.Sequential(nn.LayerNorm(feature_size), nn.Linear(feature_size, 8),
                                        nn.ELU(), nn.Linear(8, 1))
    def build(self, input_list):
        input_data = torch.cat(input_list, dim=0).to(dtype=torch.float32)
        if torch.cuda.is_available():
            input_data = input_data.to(device=device)
        output_data = self.sequential(input_data)
        return torch.split(output_data, input_list[0].shape[0], dim=0)

class DenoisingNet(nn.Module):
    def __init__(self, input_vec_size):
        super(DenoisingNet, self).__init__()
        self.propensity_net = nn.Sequential(nn.Linear(input_vec_size, 1), nn.ELU())
        self.list_size = input_vec_size
    def forward(self, input_list):
        output_propensity_list = []
        for i in range(self.list_size):
            click_feature = [torch.unsqueeze(torch.zeros_like(input_list[i]), -1)
                             for _ in range(self.list_size)]
            click_feature[i] = torch.unsqueeze(torch.ones_like(input_list[i]), -1)
            output_propensity_list.append(self.propensity_net(torch.cat(click_feature, 1)))
        return torch.cat(output_propensity_list, 1)

class DLA(object):
    def __init__(self, feature_size, rank_list_size):
        self.cuda = torch.device('cuda')
        self.is_cuda_avail = torch.cuda.is_available()
        self.feature_size = feature_size
        self.rank_list_size = rank_list_size
        self.propensity_model = DenoisingNet(self.rank_list_size)
        self.model = DNN(feature_size)
        if self.is_cuda_avail:
            self.model = self.model.to(device=self.cuda)
            self.propensity_model = self.propensity_model.to(device=self.cuda)
        self.learning_rate = 0.05
        self.global_step = 0
        self.logits_to_prob = nn.Softmax(dim=-1)
        self.loss_func = self.softmax_loss
    def create_input_feed(self, input_feed, list_size):
        self.letor_features = input_feed["letor_features"]
        self.docid_inputs = [input_feed["docid_input%d" % i] for i in range(list_size)]
        self.labels = torch.from_numpy(np.transpose([input_feed["label%d" % i] for i in range(list_size)]))
        if self.is_cuda_avail:
            self.labels = self.labels.to(device=self.cuda)
    def ranking_model(self, model, list_size):
        letor_features = np.concatenate((self.letor_features, np.zeros((1, self.feature_size), dtype=np.float32)), axis=0)
        input_feature_list = [torch.from_numpy(np.take(letor_features, ids, 0)) for ids in self.docid_inputs[:list_size]]
        return torch.cat(model.build(input_feature_list), 1)
    def softmax_loss(self, output, labels, propensity_weights=None):
        weighted_labels = (labels + 0.0000001) * propensity_weights
        label_dis = weighted_labels / torch.sum(weighted_labels, 1, keepdim=True)
        loss = softmax_cross_entropy_with_logits(logits=output, labels=label_dis) * torch.sum(weighted_labels, 1)
        return torch.sum(loss) / torch.sum(weighted_labels)
    def get_normalized_weights(self, propensity):
        propensity_list = torch.unbind(propensity, dim=1)
        return torch.stack([propensity_list[0] / p for p in propensity_list], dim=1)
    def train(self, input_feed):
        self.model.train()
        self.create_input_feed(input_feed, self.rank_list_size)
        train_output = self.ranking_model(self.model, self.rank_list_size)
        self.propensity = self.propensity_model(torch.transpose(self.labels, 0, 1))
        with torch.no_grad():
            self.propensity_weights = self.get_normalized_weights(self.logits_to_prob(self.propensity))
        self.rank_loss = self.loss_func(train_output, self.labels, self.propensity_weights)
        with torch.no_grad():
            self.relevance_weights = self.get_normalized_weights(self.logits_to_prob(train_output))
        self.exam_loss = self.loss_func(self.propensity, self.labels, self.relevance_weights)
        self.loss = self.exam_loss + self.rank_loss
        opt_denoise = torch.optim.Adagrad(self.propensity_model.parameters(), self.learning_rate)
        opt_ranker = torch.optim.Adagrad(self.model.parameters(), self.learning_rate)
        opt_denoise.zero_grad()
        opt_ranker.zero_grad()
        self.loss.backward()
        opt_denoise.step()
        opt_ranker.step()
        print(" Loss %f at Global Step %d: " % (self.loss.item(), self.global_step))
        self.global_step += 1
        return self.loss, None, {}

def get_batch(batch_size=4, list_size=3, n_docs=10, feature_size=5):
    feed = {"letor_features": np.random.rand(n_docs, feature_size).astype(np.float32)}
    for i in range(list_size):
        feed["docid_input%d" % i] = np.random.randint(0, n_docs, batch_size)
        feed["label%d" % i] = np.random.randint(0, 2, batch_size).astype(np.float32)
    return feed

if __name__ == '__main__':
    steps_per_checkpoint, max_train_iteration = 2, 3
    model = DLA(feature_size=5, rank_list_size=3)
    step_time, loss = 0.0, 0.0
    current_step = 0
    previous_losses = []
    while True:
        input_feed = get_batch()
        step_loss, _, summary = model.train(input_feed)
        loss += step_loss / steps_per_checkpoint
        current_step += 1
        if current_step % steps_per_checkpoint == 0:
            print("global step %d loss %.4f" % (model.global_step, loss))
            previous_losses.append(loss)
            loss = 0.0
        if current_step > max_train_iteration:
            break
    print(previous_losses, loss)
