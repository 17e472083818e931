import { describe, expect, it } from 'vitest';
import { refusalText, settingId } from '../src/settingRefusals';
import { promptTimeZone } from '../src/settings';

describe('refused settings', () => {
  it('names the key, the value and the reason, with a link that opens that setting', () => {
    const text = refusalText([
      { key: 'timeContext.timeZone', value: 'Mars/Olympus', message: 'invalid IANA timeZone (expected an IANA name)' },
    ]);
    expect(text).toContain('dsh.timeContext.timeZone = "Mars/Olympus"');
    expect(text).toContain('expected an IANA name');
    const link = /\[Open Setting\]\(command:workbench\.action\.openSettings\?([^)]+)\)/.exec(text);
    expect(link).not.toBeNull();
    expect(JSON.parse(decodeURIComponent(link![1]!))).toEqual(['dsh.timeContext.timeZone']);
    // The toast's first line is a whole sentence: which setting.
    expect(text.startsWith('DSH: dsh.timeContext.timeZone was refused. ')).toBe(true);
  });

  it('opens with how many when several keys were refused', () => {
    const text = refusalText([
      { key: 'timeContext.timeZone', value: 'x', message: 'bad zone' },
      { key: 'store.busyTimeoutMs', value: -1, message: 'must be positive' },
    ]);
    expect(text.startsWith('DSH: 2 settings were refused. dsh.timeContext.timeZone = "x": bad zone.')).toBe(true);
    expect(text).toContain('dsh.store.busyTimeoutMs = -1: must be positive. The sidecar keeps the default or the previous value.');
  });

  it('maps the whole tree to the dsh section', () => {
    expect(settingId('dsh')).toBe('dsh');
    expect(settingId('hover.otherFiles')).toBe('dsh.hover.otherFiles');
  });
});

describe('the time zone a prompt carries', () => {
  it('carries none while timeContext.timeZone is set and accepted: the setting comes first', () => {
    expect(promptTimeZone('Asia/Tokyo', false, 'Europe/Paris')).toBeUndefined();
  });
  it("carries the editor's zone when the setting is unset, blank or refused", () => {
    expect(promptTimeZone(null, false, 'Europe/Paris')).toBe('Europe/Paris');
    expect(promptTimeZone('  ', false, 'Europe/Paris')).toBe('Europe/Paris');
    expect(promptTimeZone('Mars/Olympus', true, 'Europe/Paris')).toBe('Europe/Paris');
    expect(promptTimeZone(undefined, false, undefined)).toBeUndefined();
  });
});
