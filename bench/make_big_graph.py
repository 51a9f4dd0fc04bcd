#!/usr/bin/env python3
"""Writes the synthetic chain graph (the text bench/synthetic_graph.cc builds, with the token
rows `n` left for --dim) for whole-process comparisons:
    bench/make_big_graph.py 1000000 /tmp/chain_1m.json
Then compare:
    /usr/bin/time -v build/opscope analyze /tmp/chain_1m.json --dim n=8 --format json -o /dev/null
    /usr/bin/time -v python3 -c "import json; json.load(open('/tmp/chain_1m.json'))"
"""
import sys

HIDDEN, INTER = 256, 512
BLOCK = [("RMSNorm", 0, 0, HIDDEN), ("Linear", 2 * INTER, HIDDEN, 2 * INTER),
         ("SiluMul", 0, 0, INTER), ("Linear", HIDDEN, INTER, HIDDEN), ("Add", 0, 0, HIDDEN)]


def main(nodes, path):
    tensors = ['{"name":"x","shape":["n",%d],"format":"bf16","role":"input"}' % HIDDEN]
    node_text = []
    prev = resid = "x"
    for i in range(nodes):
        op, wr, wc, out = BLOCK[i % 5]
        inputs = '"%s"' % prev
        if wr:
            tensors.append('{"name":"w%d","shape":[%d,%d],"format":"bf16","role":"weight"}'
                           % (i, wr, wc))
            inputs += ',"w%d"' % i
        if i % 5 == 4:
            inputs += ',"%s"' % resid
        tensors.append('{"name":"t%d","shape":["n",%d],"format":"bf16"}' % (i, out))
        node_text.append('{"name":"n%d","op":"%s","inputs":[%s],"outputs":["t%d"]}'
                         % (i, op, inputs, i))
        prev = "t%d" % i
        if i % 5 == 4:
            resid = prev
    with open(path, "w") as f:
        f.write('{"name":"chain","dims":{},"tensors":[\n' + ",\n".join(tensors) +
                '],\n"nodes":[\n' + ",\n".join(node_text) + "]}\n")


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
