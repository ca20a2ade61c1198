/**
 * Trims a fixed set of characters (white space, slashes) from both ends of a text by scanning in from each end:
 * time linear in the text, whatever lies between. A regular expression such as `/^\s+|\s+$/g`
 * retries its second alternative at every position of a run inside the text: quadratic, so one
 * value of spaces between two digits could hold the event loop for minutes.
 */
export function trimmerOf(characters: string): (text: string) => string {
  const codes = new Set(Array.from(characters, (character) => character.charCodeAt(0)));
  return (text) => {
    let start = 0;
    let end = text.length;
    while (start < end && codes.has(text.charCodeAt(start))) start++;
    while (end > start && codes.has(text.charCodeAt(end - 1))) end--;
    return start === 0 && end === text.length ? text : text.slice(start, end);
  };
}
