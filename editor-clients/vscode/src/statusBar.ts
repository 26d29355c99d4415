// The status bar item: holds the current Status and redraws it on every event.

import * as vscode from 'vscode';
import { INITIAL, Status, StatusEvent, reduce, render } from './status';

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Right, 100);
  private status: Status = INITIAL;

  /** `commands`: what a click runs, by what the rendered status asks for. */
  constructor(private readonly commands: { toggle: string; restart: string }) {
    this.draw();
    this.item.show();
  }

  /** Apply one event and redraw. */
  update(event: StatusEvent): void {
    this.status = reduce(this.status, event);
    this.draw();
  }

  get current(): Status {
    return this.status;
  }

  dispose(): void {
    this.item.dispose();
  }

  private draw(): void {
    const { text, tooltip, click } = render(this.status);
    this.item.text = text;
    this.item.tooltip = tooltip;
    this.item.command = this.commands[click];
    this.item.backgroundColor = ['error', 'crashed'].includes(this.status.phase)
      ? new vscode.ThemeColor('statusBarItem.errorBackground')
      : undefined;
  }
}
