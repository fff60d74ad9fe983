import type { Command, Option } from "commander";

export const SHELLS = ["bash", "zsh", "fish"] as const;
export type Shell = (typeof SHELLS)[number];

interface Node {
  name: string;
  description: string;
  options: { flag: string; description: string; takesValue: boolean }[];
  commands: Node[];
}

/** The command tree, as commander knows it (hidden options left out). */
function tree(cmd: Command): Node {
  const visible = (o: Option) => !(o as Option & { hidden?: boolean }).hidden && o.long !== undefined;
  return {
    name: cmd.name(),
    description: cmd.description().split("\n")[0] ?? "",
    options: [
      ...cmd.options.filter(visible).map((o) => ({ flag: o.long!, description: o.description, takesValue: o.required || o.optional })),
      { flag: "--help", description: "show help", takesValue: false },
    ],
    commands: cmd.commands.map(tree),
  };
}

/** A completion script for `shell`, written from the program's own commands and options. */
export function completionScript(program: Command, shell: Shell): string {
  const root = tree(program);
  if (shell === "bash") return bash(root);
  if (shell === "zsh") return zsh(root);
  return fish(root);
}

const names = (nodes: Node[]) => nodes.map((n) => n.name).join(" ");
const flags = (n: Node) => n.options.map((o) => o.flag).join(" ");
const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function bash(root: Node): string {
  const cases = root.commands
    .map((c) => {
      if (c.commands.length === 0) return `    ${c.name}) opts=${q(flags(c))} ;;`;
      const subs = c.commands.map((s) => `        ${s.name}) opts=${q(flags(s))} ;;`).join("\n");
      return `    ${c.name})
      if [ "$COMP_CWORD" -eq 2 ]; then COMPREPLY=($(compgen -W ${q(names(c.commands) + " --help")} -- "$cur")); return; fi
      case "\${COMP_WORDS[2]}" in
${subs}
      esac ;;`;
    })
    .join("\n");
  return `# bash completion for wardrik: source <(wardrik completion bash)
_wardrik() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" opts=""
  if [ "$COMP_CWORD" -eq 1 ]; then COMPREPLY=($(compgen -W ${q(names(root.commands) + " --help --version")} -- "$cur")); return; fi
  case "\${COMP_WORDS[1]}" in
${cases}
  esac
  if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "$opts" -- "$cur")); else COMPREPLY=($(compgen -f -- "$cur")); fi
}
complete -F _wardrik wardrik
`;
}

function zsh(root: Node): string {
  const described = (nodes: { name: string; description: string }[]) =>
    nodes.map((n) => q(`${n.name.replace(/:/g, "\\:")}:${n.description}`)).join(" ");
  const optionList = (n: Node) => described(n.options.map((o) => ({ name: o.flag, description: o.description })));
  const cases = root.commands
    .map((c) => {
      if (c.commands.length === 0) return `    ${c.name}) opts=(${optionList(c)}) ;;`;
      const subs = c.commands.map((s) => `        ${s.name}) opts=(${optionList(s)}) ;;`).join("\n");
      return `    ${c.name})
      if (( CURRENT == 3 )); then cmds=(${described(c.commands)}); _describe 'subcommand' cmds; return; fi
      case $words[3] in
${subs}
      esac ;;`;
    })
    .join("\n");
  return `#compdef wardrik
# zsh completion for wardrik: source <(wardrik completion zsh)
_wardrik() {
  local -a cmds opts
  if (( CURRENT == 2 )); then cmds=(${described(root.commands)}); _describe 'command' cmds; return; fi
  case $words[2] in
${cases}
  esac
  if [[ $PREFIX == -* ]]; then _describe 'option' opts; else _files; fi
}
compdef _wardrik wardrik
`;
}

function fish(root: Node): string {
  const lines = ["# fish completion for wardrik: wardrik completion fish | source", "complete -c wardrik -f"];
  const top = names(root.commands);
  for (const c of root.commands) {
    lines.push(`complete -c wardrik -n 'not __fish_seen_subcommand_from ${top}' -a ${c.name} -d ${q(c.description)}`);
    // The group's own name first, so `secret ls` is not taken for the top-level `ls`.
    const inCommand = `__fish_seen_subcommand_from ${c.name}`;
    for (const o of c.options)
      lines.push(`complete -c wardrik -n ${q(inCommand)} -l ${o.flag.slice(2)}${o.takesValue ? " -r" : ""} -d ${q(o.description)}`);
    if (c.commands.length === 0) continue;
    const subs = names(c.commands);
    for (const s of c.commands) {
      lines.push(
        `complete -c wardrik -n ${q(`${inCommand}; and not __fish_seen_subcommand_from ${subs}`)} -a ${s.name} -d ${q(s.description)}`,
      );
      for (const o of s.options)
        lines.push(
          `complete -c wardrik -n ${q(`${inCommand}; and __fish_seen_subcommand_from ${s.name}`)} -l ${o.flag.slice(2)}${o.takesValue ? " -r" : ""} -d ${q(o.description)}`,
        );
    }
  }
  return lines.join("\n") + "\n";
}
