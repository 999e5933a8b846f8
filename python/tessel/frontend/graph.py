"""The model graph: what an importer makes of a model file (docs/models.md).

A `Graph` is a list of `Node`s in execution order over named values, with static shapes. Each node
is one operator group: `node.make(*tensors)` builds its tensor expression from `ts.op` calls on
placeholders of its inputs (constant weights included, as numpy arrays in `graph.constants`).
"""
import numpy as np


class ModelError(ValueError):
    """A model that cannot be imported: a malformed or hostile file, an operator without a mapping,
    a symbolic dimension without a size. The message names the node (or input) at fault."""


class Value:
    """A named tensor of the graph: static shape and numpy dtype name."""

    def __init__(self, name, shape, dtype):
        self.name = name
        self.shape = tuple(int(d) for d in shape)
        self.dtype = str(dtype)

    def __repr__(self):
        return f"Value({self.name!r}, {self.shape}, {self.dtype})"


class Node:
    """One operator group: `make(*input_tensors) -> tensor`; `ops` lists the ONNX nodes it holds
    (the first one names the group; the rest were fused into it), `signature` identifies equal
    computations (the compiled model builds each signature once)."""

    def __init__(self, name, op_type, inputs, output, make, signature):
        self.name = name
        self.ops = [op_type]
        self.inputs = list(inputs)
        self.output = output
        self.make = make
        self.signature = signature
        self.view = False  # a reshape: the compiled model reads its input's buffer in a new shape

    @property
    def op_type(self):
        return "+".join(self.ops)

    def __repr__(self):
        return f"Node({self.name!r}, {self.op_type}, {self.inputs} -> {self.output!r})"


class Graph:
    """inputs / outputs: `Value`s in the model's order; constants: name -> numpy array; values:
    name -> `Value` for every tensor; nodes: `Node`s in execution order."""

    def __init__(self, inputs, outputs, constants, values, nodes):
        self.inputs = inputs
        self.outputs = outputs
        self.constants = constants
        self.values = values
        self.nodes = nodes

    def __repr__(self):
        return (f"Graph({len(self.inputs)} inputs, {len(self.nodes)} operator groups, "
                f"{len(self.constants)} constants, outputs {[v.name for v in self.outputs]})")

    def placeholders(self, node):
        """Placeholders of `node`'s inputs (tessel tensors), in its input order; the model's
        constants (weights) are marked constant, so that a CPU schedule may lay them out once
        (docs/tuning.md, "Constant operands and layout rewrite")."""
        from .. import placeholder
        out = []
        for i, name in enumerate(node.inputs):
            v = self.values[name]
            out.append(placeholder(v.shape, dtype=v.dtype, name=f"in{i}",
                                   constant=name in self.constants))
        return out

    def trace(self):
        """Builds every group's tensor expression on placeholders (what `extract_tasks` records)."""
        for node in self.nodes:
            node.make(*self.placeholders(node))

    def weight_bytes(self):
        return int(sum(np.asarray(c).nbytes for c in self.constants.values()))
