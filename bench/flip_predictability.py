#!/usr/bin/env python3
# How predictable is a good inlining flip on code of another package?
# Reads a `driftwatch train` work directory (its collected features and the
# greedy search's tried flips: kept = the flip shrank the module's .text)
# and, leaving one package out at a time, fits a logistic model of the
# features (log-scaled, standardized, L2) on the other packages' flips and
# ranks the left-out package's flips by it. Prints the precision of the top
# flips against the base rate: the share of its most confident flips that
# really shrink unseen code. Pure Python (no numpy), a few minutes.
#
#   bench/flip_predictability.py <data>/training/<name>-<seed>
import json, math, collections, sys
if len(sys.argv) != 2:
    sys.exit('usage: flip_predictability.py TRAINING_WORK_DIR')
base=sys.argv[1].rstrip('/')+'/'
j=json.load(open(base+'collected.json'))
F=j['features']; mods=j['modules']
drop={'callee_basic_block_count'}  # never a model input (LLVM 19 overwrites it)
keep=[k for k,f in enumerate(F) if f not in drop]
X=[];Y=[];G=[];D=[]
for i,m in enumerate(mods):
    try: r=json.load(open(base+'search/%d/result.json'%i))
    except Exception: continue
    pkg=m['name'].split('/')[0]
    kept=set(r.get('flipped',[]))
    for idx in list(r['rejected'])+list(kept):
        if idx>=len(m['rows']): continue
        row=m['rows'][idx]
        d=m['decisions'][idx]
        x=[math.copysign(math.log1p(abs(row[k])),row[k]) for k in keep]+[float(d)]
        X.append(x);Y.append(1 if idx in kept else 0);G.append(pkg);D.append(d)
n=len(X);p=len(X[0])
print(n,'tried flips;',sum(Y),'kept; packages',collections.Counter(G))
def fit(idx, l2=1e-2, it=300, lr=0.5):
    mu=[sum(X[i][k] for i in idx)/len(idx) for k in range(p)]
    sd=[max(1e-6,math.sqrt(sum((X[i][k]-mu[k])**2 for i in idx)/len(idx))) for k in range(p)]
    Z={i:[(X[i][k]-mu[k])/sd[k] for k in range(p)] for i in idx}
    w=[0.0]*p;b=0.0
    for t in range(it):
        gw=[0.0]*p;gb=0.0
        for i in idx:
            z=Z[i];s=b+sum(w[k]*z[k] for k in range(p))
            q=1/(1+math.exp(-max(-30,min(30,s))))-Y[i]
            gb+=q
            for k in range(p): gw[k]+=q*z[k]
        b-=lr*gb/len(idx)
        for k in range(p): w[k]-=lr*(gw[k]/len(idx)+l2*w[k])
    return mu,sd,w,b
def score(model,i):
    mu,sd,w,b=model
    return b+sum(w[k]*(X[i][k]-mu[k])/sd[k] for k in range(p))
pk=sorted(set(G))
scored=[]
for g in pk:
    tr=[i for i in range(n) if G[i]!=g]; te=[i for i in range(n) if G[i]==g]
    m=fit(tr)
    for i in te: scored.append((score(m,i),Y[i],g))
scored.sort(reverse=True)
tot=sum(Y)
for top in (10,25,50,100,200,400):
    s=scored[:top]; h=sum(y for _,y,_ in s)
    print('top %4d by score on unseen packages: %3d kept (precision %.0f%%, base rate %.0f%%)'%(top,h,100*h/top,100*tot/n))
# The same model fitted and ranked on all packages: what it finds in code it has seen.
m=fit(list(range(n)))
seen=sorted(((score(m,i),Y[i]) for i in range(n)), reverse=True)
for top in (25,100,400):
    h=sum(y for _,y in seen[:top])
    print('top %4d by score on the packages it was fitted on: %3d kept (precision %.0f%%)'%(top,h,100*h/top))
