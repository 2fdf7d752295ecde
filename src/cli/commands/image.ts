import { readFile, writeFile } from 'node:fs/promises';
import { fileProblem } from '../input.js';
import { extname } from 'node:path';
import type { Command } from 'commander';
import { BadRequestError } from '../../core/errors.js';
import type { ImagePart } from '../../core/wire/universe-types.js';
import { parseImage } from '../../core/wire/universe-input.js';
import type { CliContext } from '../context.js';
import { examples } from '../help.js';
import { printJson } from '../output.js';

const MIME: Record<string, string> = { '.png': 'image/png', '.jpg': 'image/jpeg', '.jpeg': 'image/jpeg', '.webp': 'image/webp', '.gif': 'image/gif' };

export interface ImageOptions {
  scene: string;
  systemPrompt: string;
  description: string;
  additionalPrompt?: string;
  ref: string[];
  background?: string;
  size?: string;
  aspect?: string;
  model?: string;
  output?: string;
  json?: boolean;
}

export function registerImage(program: Command, ctx: CliContext): void {
  examples(
    program
      .command('image')
      .description('generate a scene image and write it to a file')
      .requiredOption('--scene <uid>', 'generated-scene id')
      .requiredOption('--system-prompt <text>', 'image system prompt')
      .requiredOption('--description <text>', 'main scene description')
      .option('--additional-prompt <text>', 'short addendum, appended last')
      .option('--ref <ref>', 'a reference, in order: an image file or http(s) URL becomes an image part, anything else a text part (repeatable)', (v: string, acc: string[]) => [...acc, v], [])
      .option('--background <ref>', 'legacy background reference (image file or URL), sent first')
      .option('--size <size>', '1K, 2K or 4K')
      .option('--aspect <ratio>', 'aspect ratio, default 16:9')
      .option('--model <alias>', 'image model alias (default image-1)')
      .option('-o, --output <file>', 'where to write the image (default <scene>.<ext>)')
      .option('--json', 'print the response (image data replaced by the file written)'),
    [
      'mgpt image --scene s-1 --system-prompt "Painterly, warm light." --description "A harbour at dawn" -o scene.png',
      'mgpt image --scene s-2 --system-prompt "Ink." --description "The keeper" --ref "the keeper:" --ref keeper.png --aspect 4:3',
    ],
  ).action((o: ImageOptions) => runImage(ctx, o));
}

async function part(ref: string): Promise<ImagePart> {
  if (/^https?:\/\//.test(ref)) return { type: 'image_url', image_url: { url: ref } };
  const mime = MIME[extname(ref).toLowerCase()];
  if (mime) {
    try {
      return { type: 'image_url', image_url: { url: `data:${mime};base64,${(await readFile(ref)).toString('base64')}` } };
    } catch (err) {
      throw new BadRequestError(`cannot read reference image ${ref}: ${fileProblem(err)}`);
    }
  }
  return { type: 'text', text: ref };
}

export async function runImage(ctx: CliContext, o: ImageOptions): Promise<void> {
  const body: Record<string, unknown> = { sceneUid: o.scene, systemPrompt: o.systemPrompt, description: o.description };
  if (o.additionalPrompt) body.additionalPrompt = o.additionalPrompt;
  if (o.ref.length) body.referenceImages = await Promise.all(o.ref.map(part));
  if (o.background) body.backgroundReference = await part(o.background);
  if (o.size || o.aspect) body.imageConfig = { ...(o.size ? { imageSize: o.size } : {}), ...(o.aspect ? { aspectRatio: o.aspect } : {}) };
  if (o.model) body.model = o.model;
  const res = await (await ctx.backend()).generateImage(parseImage(body), { signal: ctx.signal });
  const files: string[] = [];
  for (const [i, img] of res.images.entries()) {
    const ext = Object.entries(MIME).find(([, m]) => m === img.mimeType)?.[0] ?? '.bin';
    const base = o.output ?? `${o.scene.replace(/[^\w.-]/g, '_')}${ext}`;
    const file = i === 0 ? base : base.replace(/(\.\w+)?$/, `-${i + 1}$1`);
    await writeFile(file, Buffer.from(img.data, 'base64'));
    files.push(file);
  }
  if (o.json) {
    return printJson(ctx.io, { ...res, images: res.images.map((img, i) => ({ mimeType: img.mimeType, bytes: Buffer.from(img.data, 'base64').length, file: files[i] })) });
  }
  for (const f of files) ctx.io.stdout.write(f + '\n');
}
