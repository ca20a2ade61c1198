import { engines } from '../package.json';

/**
 * Why this Node.js cannot run the service, as one line naming the release it needs and how to get
 * it; undefined when it can. `required` is package.json's `engines.node`, a caret range
 * (`^24.11.0`): the same major release, at least that minor and patch.
 */
export function nodeVersionProblem(running: string, required: string): string | undefined {
  const wanted = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(required);
  if (!wanted) throw new Error(`engines.node in package.json is not a caret range: ${required}`);
  const [major, minor, patch] = wanted.slice(1).map(Number);
  const [runningMajor, runningMinor, runningPatch] = running
    .replace(/^v/, '')
    .split('.')
    .map(Number);
  const fits =
    runningMajor === major &&
    (runningMinor > minor || (runningMinor === minor && runningPatch >= patch));
  if (fits) return undefined;
  const least = patch === 0 ? `${major}.${minor}` : `${major}.${minor}.${patch}`;
  return (
    `This service needs Node.js ${least} or a later ${major} release; this is Node.js ` +
    `${running.replace(/^v/, '')}. Install it with nvm (nvm install, which reads .nvmrc), ` +
    `fnm (fnm use) or Volta (volta install node@${major}).`
  );
}

// Imported first by every entry point: on another Node.js, stop here, before a native module (the
// SQLite driver) loads and crashes later with a segmentation fault instead of a reason.
const problem = nodeVersionProblem(process.versions.node, engines.node);
if (problem !== undefined) {
  process.stderr.write(`${problem}\n`);
  process.exit(1);
}
