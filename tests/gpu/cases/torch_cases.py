"""torch_cases.py - PyTorch programs written as a user would write them, for
reading perfkit's diagnosis of real framework code (tests/gpu/diag_cases.sh).

    python3 torch_cases.py mlp [STEPS]          an 8-layer MLP forward pass
                                                 (a chain of same-shape GEMMs)
    python3 torch_cases.py transformer [STEPS]  a small transformer training
                                                 step with pageable inputs
Each step runs inside torch.cuda.nvtx.range("step")."""
import sys

import torch

WARMUP = 2


def mlp(steps):
    torch.manual_seed(0)
    layers = []
    for _ in range(8):
        layers += [torch.nn.Linear(1024, 1024), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers).cuda().eval()
    x = torch.randn(256, 1024, device="cuda")
    with torch.no_grad():
        for s in range(WARMUP + steps):
            with torch.cuda.nvtx.range("step"):
                y = model(x)
    torch.cuda.synchronize()
    return float(y.sum())


def transformer(steps):
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(d_model=256, nhead=8, dim_feedforward=1024,
                                             batch_first=True)
    model = torch.nn.TransformerEncoder(layer, num_layers=4).cuda()
    head = torch.nn.Linear(256, 1000).cuda()
    opt = torch.optim.AdamW(list(model.parameters()) + list(head.parameters()), lr=1e-4)
    tokens = torch.randn(32, 128, 256)           # pageable host memory
    labels = torch.randint(0, 1000, (32, 128))
    for s in range(WARMUP + steps):
        with torch.cuda.nvtx.range("step"):
            x = tokens.cuda()
            y = labels.cuda()
            opt.zero_grad(set_to_none=True)
            logits = head(model(x))
            loss = torch.nn.functional.cross_entropy(logits.view(-1, 1000), y.view(-1))
            loss.backward()
            opt.step()
            loss.item()                          # a sync every step
    torch.cuda.synchronize()
    return float(loss)


def main():
    case = sys.argv[1] if len(sys.argv) > 1 else "mlp"
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    value = {"mlp": mlp, "transformer": transformer}[case](steps)
    print(f"torch_cases {case}: {steps} steps, value {value:.4f}")


if __name__ == "__main__":
    main()
