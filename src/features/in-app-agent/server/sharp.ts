/**
 * The image library (native libvips, about 30 MB of memory once loaded), loaded on the first image
 * a process handles rather than at start: a process that never sees an image never holds it.
 * Decoded images are never cached between uses.
 */
import 'server-only';
import type SharpFn from 'sharp';
import { processWide } from '../host';

type Sharp = typeof SharpFn;

export function loadSharp(): Promise<Sharp> {
  const holder = processWide('in-app-agent.sharp', () => ({ loaded: undefined as Promise<Sharp> | undefined }));
  if (!holder.loaded) {
    const loading = import('sharp').then((m) => {
      const sharp = (m as { default?: Sharp }).default ?? (m as unknown as Sharp);
      sharp.cache(false);
      return sharp;
    });
    holder.loaded = loading;
    // A failed load (a broken install) is tried again by the next image, not remembered.
    loading.catch(() => {
      if (holder.loaded === loading) holder.loaded = undefined;
    });
  }
  return holder.loaded;
}
