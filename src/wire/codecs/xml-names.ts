/** XML names as .NET's XmlConvert.EncodeLocalName writes them, for ModelState keys in XML errors. */

const NAME_START = /[\p{L}_]/u;
const NAME_CHAR = /[\p{L}\p{Nd}\p{Mn}\p{Mc}._\-\u00B7]/u;
// An underscore that would read as the start of an escape is itself escaped, as XmlConvert does.
const ESCAPE_LOOKALIKE = /_x[0-9A-Fa-f]{4}_/y;

/** Tested in place, not on a copy of the rest: a name of underscores costs linear time. */
function startsEscape(name: string, position: number): boolean {
  ESCAPE_LOOKALIKE.lastIndex = position;
  return ESCAPE_LOOKALIKE.test(name);
}

const escapeCharacter = (character: string) =>
  `_x${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}_`;

export function encodeLocalName(name: string): string {
  let encoded = '';
  let position = 0;
  for (const character of name) {
    const valid = position === 0 ? NAME_START.test(character) : NAME_CHAR.test(character);
    const lookalike = character === '_' && startsEscape(name, position);
    encoded += valid && !lookalike ? character : escapeCharacter(character);
    position += character.length;
  }
  return encoded;
}
