"""A CPU harness for our agent loop inside verl's real ToolAgentLoop machinery: the loop built the way verl's
AgentLoopWorker builds it (hydra instantiate of our agent-loop YAML entry, tools from our tool-config YAML through
verl's own loader), an offline tokenizer, and a scripted token generator in place of the model server. It is
not a model: each generate call returns the next scripted assistant text. Used by the CPU tests and
scripts/bench_train.py, and handy to debug a task's tool loop without a GPU. Needs the `train` extra.

    harness = LoopHarness(project, folder, ["dart"])
    loop, out = harness.play(ScriptedGenerator(harness.tok, [hermes_tool_calls([(name, args)]) + "<|im_end|>",
                                                         "정답: ...<|im_end|>"]), row_kwargs(task, fixture, names))
"""

from __future__ import annotations

import asyncio
import importlib.resources
import json
from pathlib import Path
from typing import Any

import hydra.utils
from omegaconf import DictConfig, OmegaConf, open_dict
from verl.experimental.agent_loop.agent_loop import AgentLoopOutput, DictConfigWrap, ToolListWrap
from verl.tools.tool_registry import load_all_tools
from verl.utils.dataset.rl_dataset import RLHFDataset
from verl.workers.rollout.replica import TokenOutput

from kopa_gen.evaluate.submission import SUBMIT_TOOL
from kopa_gen.language.modes import ToolsMode
from kopa_gen.language.task import Task
from kopa_gen.policies.base import system_prompt
from kopa_gen.project import Project
from kopa_gen.train import contract
from kopa_gen.train import tools as kopa_tools
from kopa_gen.train.agent_loop import SANDBOX_THREADS, KopaToolAgentLoop, write_agent_loop_config


def build_tokenizer(folder: Path) -> Any:
    """A tiny byte-level BPE tokenizer with a hermes-style chat template, trained here (no download)."""
    from kopa_gen.train.tiny import offline_tokenizer

    corpus = ['system user assistant tool name arguments {"a": 1} <tools> </tools> # Tools 정답'] * 20
    return offline_tokenizer(corpus, folder)


class ScriptedGenerator:
    """Stands in for verl's LLM server manager: each generate call returns the next scripted assistant text."""

    def __init__(self, tok: Any, script: list[str], latency_s: float = 0.0) -> None:
        self.tok = tok
        self.script = list(script)
        self.prompts: list[list[int]] = []
        self.latency_s = latency_s  # a stand-in for the model server's time per generate call

    async def generate(
        self, request_id: str, prompt_ids: list[int], sampling_params: Any, **_: Any
    ) -> TokenOutput:
        self.prompts.append(list(prompt_ids))
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        if not self.script:
            raise RuntimeError("the script is over")
        ids = self.tok.encode(self.script.pop(0), add_special_tokens=False)
        return TokenOutput(token_ids=ids, log_probs=[-0.1] * len(ids), stop_reason="completed")


def hermes_tool_calls(calls: list[tuple[str, Any]]) -> str:
    """Tool calls as a hermes-format assistant text (what verl's `hermes` parser reads)."""
    return "".join(
        f"<tool_call>\n{json.dumps({'name': n, 'arguments': a}, ensure_ascii=False)}\n</tool_call>"
        for n, a in calls
    )


def replay_script(record: dict[str, Any]) -> list[str]:
    """A `kopa-gen eval` episode record as a generator script: each turn's tool calls (hermes format), then the
    final message (in submit mode the text of the submitting turn, before its submit_answer call). A call is
    written as the policy's transcript sent it where it has one (a reference policy's `call_<log index>`: in
    search mode `call_tool` naming the tool the log records), else as the log records it."""
    calls = record["calls"]
    sent = {
        c["id"]: (c["function"]["name"], c["function"]["arguments"])
        for m in record.get("messages") or []
        if m.get("role") == "assistant"
        for c in m.get("tool_calls") or []
    }
    turns = [
        hermes_tool_calls([sent.get(f"call_{i}", (calls[i]["tool"], calls[i]["arguments"])) for i in turn])
        for turn in record["turns"]
    ]
    last = record["turns"][-1] if record["turns"] else []
    if last and all(calls[i]["tool"] == SUBMIT_TOOL for i in last):  # the final message beside the submission
        return [t + "<|im_end|>" for t in [*turns[:-1], record["final_message"] + turns[-1]]]
    return [t + "<|im_end|>" for t in [*turns, record["final_message"]]]


class LoopHarness:
    """One test's verl setup: config, tokenizer, tools (from our YAML) and the agent-loop entry (from our YAML)."""

    def __init__(
        self,
        project: Project,
        folder: Path,
        platforms: list[str],
        sandbox_threads: int = SANDBOX_THREADS,
        search: bool = False,
    ) -> None:
        self.tok = build_tokenizer(folder / "tok")
        cfg = OmegaConf.load(
            str(importlib.resources.files("verl") / "trainer/config/_generated_ppo_trainer.yaml")
        )
        tool_yaml = kopa_tools.write_tool_config(project, platforms, folder / "tools.yaml", search)
        loop_yaml = write_agent_loop_config(
            folder / "agent_loops.yaml", project_root=str(project.root), sandbox_threads=sandbox_threads
        )
        with open_dict(cfg):
            r = cfg.actor_rollout_ref.rollout
            r.name = "vllm"
            r.prompt_length = 400_000
            r.response_length = 400_000
            r.multi_turn.enable = True
            r.multi_turn.max_assistant_turns = 12
            r.multi_turn.max_parallel_calls = 8
            r.multi_turn.max_tool_response_length = 1_000_000
            r.multi_turn.tool_config_path = str(tool_yaml)
            r.multi_turn.format = "hermes"
            r.agent.agent_loop_config_path = str(loop_yaml)
        self.cfg: DictConfig = cfg
        self.tools = load_all_tools(str(tool_yaml), None)  # as AgentLoopWorker loads them
        entries = {e.name: e for e in OmegaConf.load(str(loop_yaml))}
        self.entry = entries[contract.AGENT_NAME]

    def loop(self, server: ScriptedGenerator) -> KopaToolAgentLoop:
        loop = hydra.utils.instantiate(
            config=self.entry,
            trainer_config=DictConfigWrap(config=self.cfg),
            server_manager=server,
            tokenizer=self.tok,
            processor=None,
            hf_model_type=None,
            dataset_cls=RLHFDataset,
            data_config=DictConfigWrap(self.cfg.data),
            tools=ToolListWrap(self.tools),
        )
        assert isinstance(loop, KopaToolAgentLoop)
        return loop

    def play(
        self, server: ScriptedGenerator, kwargs: dict[str, Any]
    ) -> tuple[KopaToolAgentLoop, AgentLoopOutput]:
        """Build the loop inside the running event loop (verl binds it at construction) and run one row."""

        async def main() -> tuple[KopaToolAgentLoop, AgentLoopOutput]:
            loop = self.loop(server)
            self.last = loop
            return loop, await loop.run({"temperature": 1.0}, **kwargs)

        return asyncio.run(main())


def row_kwargs(
    task: Task,
    fixture: dict[str, Any],
    tool_names: list[str],
    tools_mode: ToolsMode = "task",
    platforms: list[str] | None = None,
) -> dict[str, Any]:
    """The keyword arguments AgentLoopWorker passes for one contract row."""
    return {
        "raw_prompt": [
            {"role": "system", "content": system_prompt(task, "submit")},
            {"role": "user", "content": task.query},
        ],
        "tools_kwargs": {},
        "extra_info": {
            "index": 0,
            "split": "val",
            "task_id": task.id,
            "tool_selection": [*tool_names, SUBMIT_TOOL],
            "episode": contract.episode_spec(task, fixture, 0, "submit", tools_mode, platforms),
        },
    }
