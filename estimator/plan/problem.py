"""The layout problem of a resolved scenario at a cluster size: the fabric design_fabric builds for
it, the stack with its overrides, the whole units cards come in (plan.compose and the sweeps'
plan.batch build every search from here)."""

from __future__ import annotations

import dataclasses
import math

from estimator.cluster.network import Fabric, Frontend, design_fabric
from estimator.cluster.supernode import cards_quantum
from estimator.contract.resolve import Resolved
from estimator.layout import answers
from estimator.layout.memory import Buffers
from estimator.layout.search import LayoutProblem, LayoutSearch
from estimator.layout.stack_profile import StackProfile
from estimator.layout.stacks import resolve_stack
from estimator.layout.steptime import LINK_EFFICIENCY
from estimator.money.pricing import model_flops


def fabric_for(r: Resolved, cards: int) -> Fabric:
    """The network fabric `design_fabric` builds for `cards` of this scenario."""
    net = r.scenario.network
    nodes = -(-cards // r.cards_per_node)
    return design_fabric(
        endpoints=nodes * r.nics_per_node,
        switch_ports=net.switch_ports,
        oversubscription=net.oversubscription,
        rail_optimized=net.rail_optimized,
        nics_per_node=r.nics_per_node,
        port_gbps=net.port_gbps or r.nic_gbps,
        frontend=Frontend() if net.storage_network else None,
    )


def layout_problem(r: Resolved, cards: int, fabric: Fabric) -> LayoutProblem:
    """The layout search's input for this scenario at `cards` on `fabric`."""
    t, net = r.scenario.training, r.scenario.network
    nic_bytes_per_s_per_card = r.nics_per_node * r.nic_gbps * 1e9 / 8 / r.cards_per_node
    buffers = Buffers()
    if net.hccl_buffsize_mb is not None:
        buffers = dataclasses.replace(buffers, comm_buffer_bytes=net.hccl_buffsize_mb * 1024 * 1024)
    return LayoutProblem(
        arch=r.arch,
        counts=r.counts,
        seq_len=r.seq_len,
        global_batch_tokens=t.global_batch_tokens,
        precision=t.precision,
        cards=cards,
        accelerator=r.accelerator,
        cards_per_node=r.cards_per_node,
        scaleup_domain_cards=scaleup_domain(r),
        nic_bytes_per_s_per_card=nic_bytes_per_s_per_card,
        cross_leaf_bandwidth_factor=fabric.cross_leaf_bandwidth_factor,
        nodes_per_leaf_group=fabric.nodes_per_leaf_group,
        grad_dtype=t.grad_dtype,
        stack=resolved_stack(r),
        moe_imbalance=t.moe_imbalance,
        buffers=buffers,
        fixed=r.scenario.parallelism.fixed(),
        model_flop_per_token=model_flops(r)["flop_per_token"],
        compute_factor=r.compute_factor,
        link_efficiency=LINK_EFFICIENCY * r.comm_factor,
    )


def resolved_stack(r: Resolved) -> StackProfile:
    """The scenario's software stack with its overrides (training.flash_attention false = unfused)."""
    t = r.scenario.training
    overrides = dict(t.stack_overrides)
    if t.flash_attention is False:
        overrides.setdefault("attention_kernel", "unfused")
    fp8_hardware = bool(r.accelerator.peak_flops_fp8)
    return resolve_stack(t.stack, r.accelerator.vendor, overrides, r.arch.is_moe, fp8_hardware)


def scaleup_domain(r: Resolved) -> int:
    """Cards on one HCCS/NVLink domain: the server's (8 for a node, 384 for a CloudMatrix
    supernode), never more than the accelerator supports."""
    return r.scaleup_domain_cards


def layouts_at(r: Resolved, cards: int, fabric: Fabric) -> LayoutSearch:
    """The layout search at `cards` on `fabric` (remembered: layout.answers.searched)."""
    return answers.searched(layout_problem(r, cards, fabric))


def evaluate_at(r: Resolved, cards: int) -> tuple[Fabric, LayoutSearch]:
    fabric = fabric_for(r, cards)
    return fabric, layouts_at(r, cards, fabric)


def cards_multiple(r: Resolved) -> int:
    """Cards come in whole units (nodes, or supernodes where the accelerator lives in one) and whole
    model replicas: lcm(cards per unit, fixed tp·pp·cp)."""
    replica = r.scenario.parallelism.replica_cards
    return math.lcm(cards_quantum(r), replica)


def problem_at(r: Resolved, cards: int) -> LayoutProblem:
    """The layout problem of `r` at `cards` on its own fabric (the pilot's, estimator.plan.pilot)."""
    return layout_problem(r, cards, fabric_for(r, cards))
