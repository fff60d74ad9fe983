import { describe, expect, it } from "vitest";
import { ConversationKey, FilePath, findUnsafeCharacter } from "../src/index.js";

describe("findUnsafeCharacter", () => {
  it("finds every C0, DEL and C1 control and every bidirectional embedding, override and isolate", () => {
    const unsafe = [
      ...Array.from({ length: 0x20 }, (_, i) => i),
      ...Array.from({ length: 0xa0 - 0x7f }, (_, i) => 0x7f + i),
      0x202a,
      0x202b,
      0x202c,
      0x202d,
      0x202e,
      0x2066,
      0x2067,
      0x2068,
      0x2069,
    ];
    for (const cp of unsafe) expect(findUnsafeCharacter(`a${String.fromCodePoint(cp)}b`)?.position, cp.toString(16)).toBe(2);
  });

  it("leaves readable text alone, right-to-left letters and emoji included", () => {
    for (const text of ["main", "thread 42", "café", "שלום", "مرحبا", "🚀 launch", "a\u00a0b", "notes/today.md"])
      expect(findUnsafeCharacter(text)).toBeUndefined();
  });

  it("counts the position in characters, so an emoji before it counts once", () => {
    expect(findUnsafeCharacter("🚀🚀\u202e")).toEqual({ codePoint: "U+202E", name: "RIGHT-TO-LEFT OVERRIDE", position: 3 });
  });
});

describe("ConversationKey and FilePath", () => {
  it("refuse an empty value and unsafe characters with a message that says which and where", () => {
    expect(ConversationKey.safeParse("").error?.issues[0]?.message).toMatch(/must not be empty/);
    expect(ConversationKey.safeParse("x\u2067y").error?.issues[0]?.message).toMatch(/U\+2067 \(RIGHT-TO-LEFT ISOLATE\) at character 2/);
    expect(FilePath.safeParse("notes/\u0007.md").error?.issues[0]?.message).toMatch(/the file path contains U\+0007 .* at character 7/);
    expect(FilePath.safeParse("notes/today.md").success).toBe(true);
  });
});
