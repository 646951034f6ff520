// Runs the launcher's fast path (src/export/credential-fast.ts) as its own process, the way the launcher does, so a
// test can put it beside fleet-credential (cmd/fleet-credential) with the same parent and compare them: prints the
// ExecCredential and exits 0 on a cache hit, prints nothing and exits 3 where the full command would run.
import { answerFromCache } from '../../src/export/credential-fast.js';

const answered = await answerFromCache(process.argv.slice(2), process.env, (text) => process.stdout.write(text));
process.exitCode = answered ? 0 : 3;
