// The Design tab's keyboard shortcuts: Ctrl/Cmd+Enter generates, Ctrl/Cmd+Shift+V validates,
// Ctrl/Cmd+S registers. Nothing fires while an input method is composing (Japanese IME: Enter
// confirms the conversion there, it must never submit).

export type ShortcutAction = 'generate' | 'validate' | 'register';

export interface KeyLike {
  key: string;
  ctrlKey: boolean;
  metaKey: boolean;
  shiftKey: boolean;
  altKey: boolean;
  isComposing?: boolean;
  /** 229: the key went to the IME (Chromium/WebKit report this while composing). */
  keyCode?: number;
}

/** Whether an input method is composing: the event says so, or the key went to the IME. */
export function isComposing(event: KeyLike): boolean {
  return event.isComposing === true || event.keyCode === 229;
}

/** The action of a key press, or null. `mac` picks Cmd over Ctrl as the modifier. */
export function shortcutFor(event: KeyLike, mac: boolean): ShortcutAction | null {
  if (isComposing(event) || event.altKey) return null;
  const modifier = mac ? event.metaKey : event.ctrlKey;
  if (!modifier) return null;
  const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
  if (key === 'Enter' && !event.shiftKey) return 'generate';
  if (key === 'v' && event.shiftKey) return 'validate';
  if (key === 's' && !event.shiftKey) return 'register';
  return null;
}

/** True on macOS and iOS, where the shortcut modifier is Cmd. */
export function isMac(platform: string): boolean {
  return /mac|iphone|ipad|ipod/i.test(platform);
}

/** The shortcut as shown in a button's title: `Ctrl+Enter`, `⌘Enter`. */
export function shortcutLabel(action: ShortcutAction, mac: boolean): string {
  const mod = mac ? '⌘' : 'Ctrl+';
  switch (action) {
    case 'generate':
      return `${mod}Enter`;
    case 'validate':
      return mac ? '⌘⇧V' : 'Ctrl+Shift+V';
    case 'register':
      return `${mod}S`;
  }
}
