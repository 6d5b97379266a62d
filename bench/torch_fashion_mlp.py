# Reference: the example-04 recipe in PyTorch (Debian python3-torch), for accuracy and
# wall-time comparison with ./build/examples/04_mnist_mlp on the same machine.
# Run: /usr/bin/python3 bench/torch_fashion_mlp.py 0 1 2   (seeds)
import gzip, numpy as np, torch, sys, time
torch.set_num_threads(2)
def load(p, off): return np.frombuffer(gzip.open(p).read(), np.uint8, offset=off)
d='/usr/share/datasets/fashion-mnist/'
xtr=load(d+'train-images-idx3-ubyte.gz',16).reshape(-1,784).astype(np.float32)/255
ytr=load(d+'train-labels-idx1-ubyte.gz',8).astype(np.int64)
xte=load(d+'t10k-images-idx3-ubyte.gz',16).reshape(-1,784).astype(np.float32)/255
yte=load(d+'t10k-labels-idx1-ubyte.gz',8).astype(np.int64)
m,s=xtr.mean(),xtr.std(); xtr=(xtr-m)/s; xte=(xte-m)/s
for seed in [int(a) for a in sys.argv[1:]]:
    torch.manual_seed(seed)
    net=torch.nn.Sequential(torch.nn.Linear(784,128),torch.nn.ReLU(),torch.nn.Linear(128,10))
    opt=torch.optim.Adam(net.parameters(),lr=1e-3)
    X=torch.tensor(xtr); Y=torch.tensor(ytr); t0=time.time()
    for e in range(10):
        perm=torch.randperm(60000)
        for i in range(0,60000,128):
            idx=perm[i:i+128]; opt.zero_grad()
            loss=torch.nn.functional.cross_entropy(net(X[idx]),Y[idx]); loss.backward(); opt.step()
    with torch.no_grad(): acc=(net(torch.tensor(xte)).argmax(1)==torch.tensor(yte)).float().mean().item()
    print(f"torch seed {seed}: {100*acc:.2f}%  {time.time()-t0:.1f}s")
