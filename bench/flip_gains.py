#!/usr/bin/env python3
# How many bytes do the greedy search's flips save, and do the big savers
# carry over to code of another package better than the small ones?
# Reads a `driftwatch train` work directory whose search recorded every flip
# it tried with its gain (driftwatch after --search-min-gain); per module,
# the flips up to its first kept one (after it the trajectory is no longer
# the default's, whose features the work directory holds). Prints:
#  1. the flips by bytes saved (or added): how much of the search's gain is
#     a byte or two, as a register or alignment accident makes;
#  2. leaving one package out at a time, a logistic model of the features
#     fitted on the other packages' flips to predict "saves at least K
#     bytes", and what departing at its most confident flips of unseen
#     packages would do: the net bytes those flips save (added bytes count
#     against) and how many of them grow their module.
# Pure Python (no numpy), a few minutes.
#
#   bench/flip_gains.py <data>/training/<name>-<seed>
import collections, json, math, sys

if len(sys.argv) != 2:
    sys.exit('usage: flip_gains.py TRAINING_WORK_DIR')
base = sys.argv[1].rstrip('/') + '/'
collected = json.load(open(base + 'collected.json'))
names = collected['features']
keep = [k for k, f in enumerate(names) if f != 'callee_basic_block_count']  # LLVM 19 overwrites it

X, gain, pkg = [], [], []
for i, m in enumerate(collected['modules']):
    try:
        r = json.load(open(base + 'search/%d/result.json' % i))
    except OSError:
        continue
    if 'tried' not in r:
        sys.exit('%s: the search recorded no gains (a run of an older driftwatch)' % base)
    kept = set(r.get('flipped', []))
    for idx, change in r['tried']:
        if change is None or idx >= len(m['rows']):
            continue  # a failed compile, or a flip past the default trajectory's end
        row = m['rows'][idx]
        X.append([math.copysign(math.log1p(abs(row[k])), row[k]) for k in keep] + [float(m['decisions'][idx])])
        gain.append(-change)
        pkg.append(m['name'].split('/')[0])
        # After a kept flip the trajectory is no longer the default's, whose
        # features these rows are: later flips would be described wrongly.
        if idx in kept:
            break
if not X:
    sys.exit('%s: the search tried no flip' % base)
n, p = len(X), len(X[0])
print('%d flips tried in %d packages; %d shrank their module, %d grew it, %d left it the same size' %
      (n, len(set(pkg)), sum(g > 0 for g in gain), sum(g < 0 for g in gain), sum(g == 0 for g in gain)))

print('\n| bytes saved | flips | bytes in all |\n|---|---:|---:|')
buckets = [(1, 2), (3, 7), (8, 15), (16, 31), (32, 63), (64, 10**9)]
for lo, hi in buckets:
    sel = [g for g in gain if lo <= g <= hi]
    print('| %s | %d | %d |' % ('%d-%d' % (lo, hi) if hi < 10**9 else '%d+' % lo, len(sel), sum(sel)))
grew = [g for g in gain if g < 0]
print('| grew | %d | %d |' % (len(grew), sum(grew)))


def fit(rows, target, l2=1e-2, iterations=150, lr=0.5):
    mu = [sum(X[i][k] for i in rows) / len(rows) for k in range(p)]
    sd = [max(1e-6, math.sqrt(sum((X[i][k] - mu[k]) ** 2 for i in rows) / len(rows))) for k in range(p)]
    Z = [[(X[i][k] - mu[k]) / sd[k] for k in range(p)] for i in rows]
    Y = [target(gain[i]) for i in rows]
    w, b = [0.0] * p, 0.0
    for _ in range(iterations):
        gw, gb = [0.0] * p, 0.0
        for z, y in zip(Z, Y):
            s = b + sum(wk * zk for wk, zk in zip(w, z))
            q = 1 / (1 + math.exp(-max(-30, min(30, s)))) - y
            gb += q
            for k in range(p):
                gw[k] += q * z[k]
        b -= lr * gb / len(rows)
        w = [wk - lr * (gk / len(rows) + l2 * wk) for wk, gk in zip(w, gw)]
    return lambda i: b + sum(w[k] * (X[i][k] - mu[k]) / sd[k] for k in range(p))


print('\nDeparting at the most confident flips of packages the model never saw:')
print('| target | top | saves K+ | shrink | grow | net bytes saved |\n|---|---:|---:|---:|---:|---:|')
for K in (1, 8, 16):
    target = lambda g, K=K: 1 if g >= K else 0
    scored = []
    for left_out in sorted(set(pkg)):
        rows = [i for i in range(n) if pkg[i] != left_out]
        model = fit(rows, target)
        scored += [(model(i), i) for i in range(n) if pkg[i] == left_out]
    scored.sort(reverse=True)
    for top in (10, 25, 50, 100, 200):
        sel = [gain[i] for _, i in scored[:top]]
        print('| saves >= %d | %d | %d | %d | %d | %+d |' %
              (K, top, sum(g >= K for g in sel), sum(g > 0 for g in sel), sum(g < 0 for g in sel), sum(sel)))
    print('| saves >= %d: base rate | | %.1f%% | | | |' % (K, 100 * sum(target(g) for g in gain) / n))
