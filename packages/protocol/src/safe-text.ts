/**
 * Keys and paths that people read back (conversation keys, file paths) must
 * show what they are: a control character or a bidirectional override can make
 * `main\u202Enoitasrevnoc` look like another key in a terminal or a log.
 */

const BIDI_NAMES: Record<number, string> = {
  0x202a: "LEFT-TO-RIGHT EMBEDDING",
  0x202b: "RIGHT-TO-LEFT EMBEDDING",
  0x202c: "POP DIRECTIONAL FORMATTING",
  0x202d: "LEFT-TO-RIGHT OVERRIDE",
  0x202e: "RIGHT-TO-LEFT OVERRIDE",
  0x2066: "LEFT-TO-RIGHT ISOLATE",
  0x2067: "RIGHT-TO-LEFT ISOLATE",
  0x2068: "FIRST STRONG ISOLATE",
  0x2069: "POP DIRECTIONAL ISOLATE",
};

export interface UnsafeCharacter {
  /** `U+202E` */
  codePoint: string;
  /** `RIGHT-TO-LEFT OVERRIDE`, or `control character` */
  name: string;
  /** 1-based position in the text, counted in characters (code points). */
  position: number;
}

/** The first control character (C0, DEL, C1) or bidirectional override in `text`, if any. */
export function findUnsafeCharacter(text: string): UnsafeCharacter | undefined {
  let position = 0;
  for (const ch of text) {
    position += 1;
    const cp = ch.codePointAt(0)!;
    const control = cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);
    const bidi = BIDI_NAMES[cp];
    if (control || bidi) {
      return { codePoint: "U+" + cp.toString(16).toUpperCase().padStart(4, "0"), name: bidi ?? "control character", position };
    }
  }
  return undefined;
}

/** A sentence for an error message: `contains U+202E (RIGHT-TO-LEFT OVERRIDE) at character 5; ...` */
export function describeUnsafeCharacter(found: UnsafeCharacter): string {
  return `contains ${found.codePoint} (${found.name}) at character ${found.position}; control characters and bidirectional overrides are not allowed`;
}
