import type { Command } from "commander";
import { completionScript, SHELLS, type Shell } from "../completion.js";
import { examples, UsageError } from "../output.js";

export function registerCompletion(program: Command): void {
  examples(
    program
      .command("completion")
      .argument("<shell>", SHELLS.join(", "))
      .description("print a shell completion script for wardrik's commands and options"),
    "source <(wardrik completion bash)      # in ~/.bashrc",
    "source <(wardrik completion zsh)       # in ~/.zshrc, after compinit",
    "wardrik completion fish > ~/.config/fish/completions/wardrik.fish",
  ).action((shell: string) => {
    if (!(SHELLS as readonly string[]).includes(shell)) throw new UsageError(`unknown shell "${shell}"; choose ${SHELLS.join(", ")}`);
    process.stdout.write(completionScript(program, shell as Shell));
  });
}
