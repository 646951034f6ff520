// The Go oracle of the invocation properties (test/exec-oracle): one long-running process, asked one JSON line at a
// time, in its own working directory (the tree the properties generate commands over).
import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { buildScriptOutput } from './binaries.js';

const BUILD = join(fileURLToPath(new URL('../exec-oracle', import.meta.url)), 'build.sh');

export interface GoLooked {
  lookPath: string;
  /** '' (none), 'dot' (ErrDot), 'notfound' (ErrNotFound), or the underlying error's text. */
  lookErr: string;
  cmdPath: string;
  cmdErr: string;
  /** exec.Command's Path made absolute against the oracle's directory, not cleaned. */
  abs: string;
  ino: number;
}

export interface GoAllowed {
  allowed: boolean;
  err: string;
}

export class ExecOracle {
  private readonly child: ChildProcess;
  private buffer = '';
  private readonly waiting: Array<(line: string) => void> = [];

  private constructor(binary: string, cwd: string) {
    this.child = spawn(binary, [], { cwd, stdio: ['pipe', 'pipe', 'inherit'] });
    this.child.stdout!.setEncoding('utf8');
    this.child.stdout!.on('data', (d: string) => {
      this.buffer += d;
      let nl: number;
      while ((nl = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        this.waiting.shift()!(line);
      }
    });
  }

  /** Builds the oracle (a no-op when the cache is warm) and starts it in `cwd`. */
  static start(cwd: string): ExecOracle {
    return new ExecOracle(buildScriptOutput(BUILD), cwd);
  }

  private ask<T>(request: object): Promise<T> {
    return new Promise<T>((resolve) => {
      this.waiting.push((line) => resolve(JSON.parse(line) as T));
      this.child.stdin!.write(JSON.stringify(request) + '\n');
    });
  }

  lookPath(name: string, path: string | undefined, godebug: string | undefined): Promise<GoLooked> {
    return this.ask({ op: 'lookpath', name, path: path ?? null, godebug: godebug ?? null });
  }

  allowlist(
    name: string,
    path: string | undefined,
    godebug: string | undefined,
    allowlist: string[],
    id: number,
  ): Promise<GoAllowed> {
    return this.ask({ op: 'allowlist', name, path: path ?? null, godebug: godebug ?? null, allowlist, id });
  }

  stop(): void {
    this.child.stdin!.end();
    this.child.kill();
  }
}
