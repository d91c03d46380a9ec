import type { ComponentChildren } from 'preact';
import { useEffect, useRef } from 'preact/hooks';

/**
 * A native modal <dialog>: it traps the focus, closes on Escape and hands the focus back to
 * what opened it, which hand-made overlays have to redo.
 */
export function ModalDialog({ title, onClose, children }: { title: string; onClose: () => void; children: ComponentChildren }) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    dialog?.showModal();
    return () => dialog?.close();
  }, []);
  return (
    <dialog ref={ref} class="modal" aria-labelledby="modal-title" onClose={onClose}>
      <div class="modal-head">
        <h2 id="modal-title">{title}</h2>
        <button type="button" onClick={() => ref.current?.close()}>
          Close
        </button>
      </div>
      {children}
    </dialog>
  );
}

/** A yes/no question in a modal dialog; only the confirm button acts. */
export function ConfirmDialog(props: { title: string; message: string; confirmLabel: string; onConfirm: () => void; onCancel: () => void }) {
  return (
    <ModalDialog title={props.title} onClose={props.onCancel}>
      <p>{props.message}</p>
      <div class="actions">
        <button type="button" class="danger" onClick={props.onConfirm}>
          {props.confirmLabel}
        </button>
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </div>
    </ModalDialog>
  );
}
