import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

/**
 * The machine's limit: plain node:http sending the GetRequirements bytes the service produced.
 * Arguments: port, JSON file, XML file.
 */
const [port, jsonFile, xmlFile] = process.argv.slice(2);
const bodies = { json: readFileSync(jsonFile), xml: readFileSync(xmlFile) };

createServer((request, response) => {
  const xml = request.url === '/xml';
  response.writeHead(200, {
    'Content-Type': xml ? 'application/xml; charset=utf-8' : 'application/json; charset=utf-8',
    'Content-Length': (xml ? bodies.xml : bodies.json).length,
  });
  response.end(xml ? bodies.xml : bodies.json);
}).listen(Number(port), '127.0.0.1', () => process.send?.('ready'));
