"""Issue 27 probes on CUDA, each in its own subprocess (a CUDA error poisons a process)."""
import json, os, subprocess, sys, textwrap
CASES = {
"kv_cache": """
import torch, symc
torch.set_default_device("cuda")
class Dec(torch.nn.Module):
    def forward(self, q, k_cache, v_cache, k_new, v_new):
        k = torch.cat([k_cache, k_new], 1); v = torch.cat([v_cache, v_new], 1)
        att = torch.softmax(q @ k.transpose(1, 2) / 4.0, -1)
        return att @ v, k, v
m = Dec(); c = symc.compile(m)
kc = torch.zeros(2, 0, 16); vc = torch.zeros(2, 0, 16)
ke, ve = kc, vc
with torch.no_grad():
    for i in range(10):
        q = torch.randn(2, 1, 16); kn = torch.randn(2, 1, 16); vn = torch.randn(2, 1, 16)
        o, kc, vc = c(q, kc, vc, kn, vn); oe, ke, ve = m(q, ke, ve, kn, vn)
        torch.cuda.synchronize()
        assert torch.allclose(o, oe, atol=1e-4), (i, (o-oe).abs().max())
print("OK", symc.explain(c).compiles)
""",
"empty_index": """
import torch, symc
torch.set_default_device("cuda")
f = symc.compile(lambda x, i: x[i] + 1)
try:
    r = f(torch.zeros(0), torch.tensor([0])); torch.cuda.synchronize(); print("NO ERROR", r)
except IndexError as e: print("OK IndexError", e)
except Exception as e: print("OTHER", type(e).__name__, e)
""",
"tile_empty": """
import torch, symc
torch.set_default_device("cuda")
f = symc.compile(lambda x: x.tile(2, 3) * 2)
r = f(torch.zeros(0, 3)); torch.cuda.synchronize(); print("OK", r.shape, torch.zeros(0,3).tile(2,3).shape)
""",
"uint8": """
import torch, symc
torch.set_default_device("cuda")
x = torch.randint(0, 255, (5, 7), dtype=torch.uint8)
f = symc.compile(lambda x: (x + 3) * 2)
g = symc.compile(lambda x: x.sum(1))
print("OK" if torch.equal(f(x), (x + 3) * 2) and torch.equal(g(x), x.sum(1)) else "WRONG")
""",
"default_device": """
import torch, symc
torch.set_default_device("cuda")
f = symc.compile(lambda x: torch.zeros(x.shape) + x)
x = torch.randn(3, 5); print("OK" if torch.equal(f(x), x) else "WRONG")
""",
"complex": """
import torch, symc
torch.set_default_device("cuda")
f = symc.compile(lambda x: x * 2 + 1)
x = torch.randn(4, dtype=torch.complex64); print("OK" if torch.allclose(f(x), x * 2 + 1) else "WRONG")
""",
"hf_bert": """
import torch, symc, transformers
torch.set_default_device("cuda")
cfg = transformers.BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, intermediate_size=64, max_position_embeddings=64)
m = transformers.BertForMaskedLM(cfg).cuda(); c = symc.compile(m)
for T in (8, 12, 5, 17):
    ids = torch.randint(0, 100, (2, T)); out = c(input_ids=ids, labels=ids); out.loss.backward()
e = symc.explain(c); print("compiles", e.compiles, "breaks", e.graph_breaks); print([str(b) for b in e.breaks][:5])
""",
"hf_t5": """
import torch, symc, transformers
torch.set_default_device("cuda")
cfg = transformers.T5Config(vocab_size=100, d_model=32, d_kv=8, d_ff=64, num_layers=2, num_heads=4, decoder_start_token_id=0)
m = transformers.T5ForConditionalGeneration(cfg).cuda(); c = symc.compile(m)
for T in (8, 12, 5):
    ids = torch.randint(0, 100, (2, T)); out = c(input_ids=ids, labels=ids); out.loss.backward()
e = symc.explain(c); print("compiles", e.compiles, "breaks", e.graph_breaks)
""",
}
res = {}
for name, src in CASES.items():
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(src)], capture_output=True, text=True, timeout=240)
    res[name] = {"rc": p.returncode, "out": p.stdout[-1500:], "err": p.stderr[-2500:]}
    print(f"== {name}: rc={p.returncode}\n{p.stdout[-600:]}\n{p.stderr[-900:]}", flush=True)
json.dump(res, open(os.path.join(os.environ.get("OUT", "/tmp"), "probe27.json"), "w"), indent=1)
