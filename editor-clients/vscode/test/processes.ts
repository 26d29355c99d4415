// The prewrite servers running under a process, found in /proc (Linux), for tests that crash one.
import { readFileSync, readdirSync } from 'node:fs';

/** A file under /proc/<pid>/, or undefined when that process has gone meanwhile. */
function procFile(pid: number, name: string): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/${name}`, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ESRCH') {
      return undefined;
    }
    throw error;
  }
}

/** Parent pid by pid, for every process now running. */
function parents(): Map<number, number> {
  const parent = new Map<number, number>();
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so read after the last ')'
    const stat = procFile(Number(entry), 'stat');
    if (stat) {
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    }
  }
  return parent;
}

/** The pids of the `prewrite serve` processes (`-m lsp_server.cli serve`) descended from `ancestor`. */
export function serverPids(ancestor: number): number[] {
  const parent = parents();
  const descends = (pid: number): boolean => {
    for (let up = parent.get(pid); up !== undefined && up > 1; up = parent.get(up)) {
      if (up === ancestor) {
        return true;
      }
    }
    return false;
  };
  return [...parent.keys()].filter((pid) => {
    const argv = procFile(pid, 'cmdline')?.split('\0') ?? [];
    return argv.includes('lsp_server.cli') && argv.includes('serve') && descends(pid);
  });
}
