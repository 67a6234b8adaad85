import { describe, expect, it } from 'vitest';
import { ConversationModel } from '../src/conversation/model';
import { ConversationRenderer } from '../src/conversation/render';
import {
  answerFrom,
  answerText,
  optionPicks,
  otherPick,
  placeholder,
  questionNotice,
  type QuestionCardData,
  questionCard,
  questionCardData,
  renderQuestionCard,
} from '../src/questions/questionModel';

const single = { question: 'Which style?', options: ['Google', 'NumPy'] };
const multi = { question: 'Which files?', options: ['a.py', 'b.py', '$(x).py'], multiSelect: true };
const free = { question: 'Why?' };

describe('the QuickPick of a question', () => {
  it('lists the options and Other…, which follows what is typed', () => {
    expect(optionPicks(single).map((p) => p.label)).toEqual(['Google', 'NumPy', '$(edit) Other…']);
    expect(optionPicks(multi)[2]).toMatchObject({ option: '$(x).py' });
    expect(optionPicks(multi)[2]!.label).not.toBe('$(x).py'); // no icon from the model's text
    expect(otherPick('  with examples ')).toMatchObject({ label: '$(edit) Answer: with examples', alwaysShow: true });
    expect(optionPicks(free)).toHaveLength(1);
    expect(placeholder(multi)).toContain('one or more');
    expect(placeholder(free)).toContain('Type your answer');
  });

  it('answers with one option, several, the user\'s own words, or dismisses', () => {
    expect(answerFrom(single, ['NumPy'])).toEqual({ answer: 'NumPy' });
    expect(answerFrom(single, ['NumPy'], 'Google with examples')).toEqual({ answer: 'Google with examples' });
    expect(answerFrom(single, [])).toEqual({ dismissed: true });
    expect(answerFrom(multi, ['a.py', '$(x).py'])).toEqual({ answers: ['a.py', '$(x).py'] });
    expect(answerFrom(multi, ['b.py'], 'and the README')).toEqual({ answers: ['b.py'], answer: 'and the README' });
    expect(answerFrom(multi, ['not an option'])).toEqual({ dismissed: true });
    expect(answerFrom(free, [], ' because ')).toEqual({ answer: 'because' });
    expect(answerText({ answers: ['a', 'b'], answer: 'c' })).toBe('a; b; c');
  });
});

describe('the question card', () => {
  it('shows the question and its options, then the answer', () => {
    const model = new ConversationModel();
    const renderer = new ConversationRenderer();
    renderer.registerCard(questionCard, renderQuestionCard);
    const card = model.addCard<QuestionCardData>(questionCard, questionCardData('q1', multi));
    const open = renderer.entry(card);
    expect(open).toContain('Which files?');
    expect(open).toContain('(pick one or more)');
    expect(open).toContain('<li>b.py</li>');
    expect(open).toContain('data-action="answer"');
    model.updateCard<QuestionCardData>(card.id, { outcome: 'answered', answer: 'a.py; b.py' }, false);
    expect(renderer.entry(card)).toContain('You answered: a.py; b.py');
    model.updateCard<QuestionCardData>(card.id, { outcome: 'dismissed' }, false);
    expect(renderer.entry(card)).toContain('the agent decides itself');
  });
});

describe('a question waits without taking the keyboard (issue 31)', () => {
  it('is announced in one line by a notification, and its card says Answer… opens the picker', () => {
    expect(questionNotice({ question: 'Which\nstyle?' })).toBe('Plansight asks: Which style?');
    expect(questionNotice({ question: 'x'.repeat(500) }).length).toBeLessThan(220);
    const model = new ConversationModel();
    const card = model.addCard<QuestionCardData>(questionCard, questionCardData('q-1', single));
    const renderer = new ConversationRenderer();
    renderer.registerCard(questionCard, renderQuestionCard);
    const html = renderer.entry(card);
    expect(html).toContain('nothing opens by itself');
    expect(placeholder(single)).toContain('Escape: answer later');
  });
});
