// @ts-check
// Run by npm before `npm start` and `npm test` build or run anything, and before every Jest run
// (`npm run test:quick` and the like), on whatever Node.js the machine has (plain CommonJS, no
// dependency): on another release than package.json's engines, the same one line as the built
// service prints (src/node-version.ts), instead of a missing tool or a crash later.
const { engines } = require('../package.json');

const [major, minor] = engines.node.replace('^', '').split('.').map(Number);
const [runningMajor, runningMinor] = process.versions.node.split('.').map(Number);
if (runningMajor !== major || runningMinor < minor) {
  process.stderr.write(
    `This service needs Node.js ${major}.${minor} or a later ${major} release; this is Node.js ` +
      `${process.versions.node}. Install it with nvm (nvm install, which reads .nvmrc), ` +
      `fnm (fnm use) or Volta (volta install node@${major}).\n`,
  );
  process.exit(1);
}
