import { describe, expect, it } from 'vitest';
import { decodeImageDataUrl, sniffImageType } from '../../src/llm/image-data.js';
import { toWireMessages } from '../../src/llm/llm-provider.js';
import type { ChatMessage } from '../../src/llm/messages.js';

const url = 'data:image/png;base64,AAAA';

describe('images on the wire', () => {
  it('sends a user message without images as a string, and one with images as text and image parts', () => {
    const wire = toWireMessages([
      { role: 'user', content: 'plain' },
      { role: 'user', content: 'old', images: [{ attachmentId: 'not-loaded' }] },
      { role: 'user', content: 'look', images: [{ url, detail: 'low' }] },
    ]);
    expect(wire).toEqual([
      { role: 'user', content: 'plain' },
      { role: 'user', content: 'old' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'look' },
          { type: 'image_url', image_url: { url, detail: 'low' } },
        ],
      },
    ]);
  });

  it("sends tools' images in one user message after the run of tool results, never between a call and its results", () => {
    const messages: ChatMessage[] = [
      {
        role: 'assistant',
        content: null,
        toolCalls: [
          { id: 'a', name: 'x', arguments: '{}' },
          { id: 'b', name: 'y', arguments: '{}' },
        ],
      },
      { role: 'tool', toolCallId: 'a', content: 'first', images: [{ url }] },
      { role: 'tool', toolCallId: 'b', content: 'second' },
      { role: 'assistant', content: 'done', toolCalls: [] },
    ];
    const wire = toWireMessages(messages);
    expect(wire.map((m) => m.role)).toEqual(['assistant', 'tool', 'tool', 'user', 'assistant']);
    expect(wire[1]).toEqual({ role: 'tool', tool_call_id: 'a', content: 'first' });
    expect(wire[3]).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'The images tool call a returned:' },
        { type: 'image_url', image_url: { url } },
      ],
    });
  });
});

describe('image data URLs', () => {
  const png = Buffer.from('89504e470d0a1a0a0000', 'hex');
  const of = (type: string, bytes: Buffer) => `data:${type};base64,${bytes.toString('base64')}`;

  it('takes PNG, JPEG, GIF and WebP by their bytes, as what the bytes are', () => {
    expect(sniffImageType(png)).toBe('image/png');
    expect(sniffImageType(Buffer.from('ffd8ffe0', 'hex'))).toBe('image/jpeg');
    expect(sniffImageType(Buffer.from('GIF89a...'))).toBe('image/gif');
    expect(sniffImageType(Buffer.from('RIFF\u0000\u0000\u0000\u0000WEBPVP8 '))).toBe('image/webp');
    const mislabelled = decodeImageDataUrl(of('image/jpeg', png), 100);
    expect('mediaType' in mislabelled && mislabelled.mediaType).toBe('image/png');
  });

  it('refuses text, undeclared types and what is over the limit, before decoding it', () => {
    expect(decodeImageDataUrl(of('image/png', Buffer.from('hello')), 100)).toEqual({ problem: expect.stringContaining('is not an image') });
    expect(decodeImageDataUrl(of('image/svg+xml', Buffer.from('<svg/>')), 100)).toEqual({ problem: expect.stringContaining('not an accepted image type') });
    expect(decodeImageDataUrl(of('image/png', Buffer.concat([png, Buffer.alloc(100)])), 100)).toEqual({ problem: expect.stringContaining('larger than 100') });
    expect(decodeImageDataUrl('data:image/png,raw', 100)).toEqual({ problem: expect.stringContaining('base64 data URL') });
  });
});
