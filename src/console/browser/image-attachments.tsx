import { useRef } from 'preact/hooks';

/** The API's default limits (IMAGE_MAX_BYTES, IMAGE_MAX_PER_MESSAGE): checked here so that a too large image is said before it is sent. */
export const IMAGE_MAX_BYTES = 8 * 1024 * 1024;
export const IMAGE_MAX_PER_MESSAGE = 8;
const TYPES = ['image/png', 'image/jpeg', 'image/webp', 'image/gif'];

export interface AttachedImage {
  name: string;
  /** `data:image/…;base64,…`: what the message's image_url part carries. */
  url: string;
}

function readAsDataUrl(file: File): Promise<string> {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve(String(reader.result));
    reader.onerror = () => reject(reader.error ?? new Error(`could not read ${file.name}`));
    reader.readAsDataURL(file);
  });
}

interface Props {
  images: readonly AttachedImage[];
  onChange: (images: AttachedImage[]) => void;
  /** Why a file was not attached. */
  onRefuse: (reason: string) => void;
  disabled: boolean;
}

/** The composer's images: a file picker (PNG, JPEG, WebP, GIF up to 8 MB, 8 a message) and what is attached, each removable. */
export function ImageAttachments({ images, onChange, onRefuse, disabled }: Props) {
  const input = useRef<HTMLInputElement>(null);
  const pick = async (files: FileList | null) => {
    const added: AttachedImage[] = [];
    for (const file of files ? [...files] : []) {
      if (!TYPES.includes(file.type)) onRefuse(`${file.name} is not a PNG, JPEG, WebP or GIF image`);
      else if (file.size > IMAGE_MAX_BYTES) onRefuse(`${file.name} is larger than 8 MB`);
      else if (images.length + added.length >= IMAGE_MAX_PER_MESSAGE) onRefuse(`A message takes at most ${IMAGE_MAX_PER_MESSAGE} images`);
      else added.push({ name: file.name, url: await readAsDataUrl(file) });
    }
    if (input.current) input.current.value = '';
    if (added.length > 0) onChange([...images, ...added]);
  };
  return (
    <div class="attachments">
      <label class="attach">
        Attach images
        <input ref={input} type="file" accept={TYPES.join(',')} multiple disabled={disabled} onChange={(e) => void pick(e.currentTarget.files)} />
      </label>
      {images.length > 0 && (
        <ul class="turn-images" aria-label="Attached images">
          {images.map((image, i) => (
            <li key={i}>
              <img src={image.url} alt={image.name} />
              <button type="button" class="small" onClick={() => onChange(images.filter((_, j) => j !== i))} aria-label={`Remove ${image.name}`}>
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
