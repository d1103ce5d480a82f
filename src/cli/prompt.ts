/** A hidden-input prompt on the terminal (the password for `cms login`), without a dependency. */

/** Reads one line from a TTY stdin with echo off; undefined when stdin is not a terminal. */
export function readHidden(question: string): Promise<string> | undefined {
  const { stdin, stderr } = process;
  if (!stdin.isTTY) return undefined;
  return new Promise((resolve, reject) => {
    let typed = "";
    const finish = (done: () => void) => {
      stdin.off("data", onData);
      stdin.setRawMode(false);
      stdin.pause();
      stderr.write("\n");
      done();
    };
    // Raw mode turns the terminal's echo off; we get each key as typed, and handle line editing ourselves.
    const onData = (chunk: Buffer) => {
      for (const ch of chunk.toString("utf8")) {
        if (ch === "\r" || ch === "\n") return finish(() => resolve(typed));
        if (ch === "\u0003" || ch === "\u0004") return finish(() => reject(new Error("login cancelled")));
        if (ch === "\u007f" || ch === "\b") typed = [...typed].slice(0, -1).join("");
        else if (ch >= " ") typed += ch;
      }
    };
    stdin.setRawMode(true);
    stdin.resume();
    stdin.on("data", onData);
    stderr.write(question);
  });
}
