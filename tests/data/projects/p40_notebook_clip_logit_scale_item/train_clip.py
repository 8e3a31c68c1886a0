#!/usr/bin/env python
# coding: utf-8

# In[1]:


import torch

from utils.helpers import clip_loss, get_logit_scale
from utils.models import TinyCLIP

torch.manual_seed(0)


# In[2]:


model = TinyCLIP()
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.0)


# In[3]:


for step in range(3):
    images, texts = torch.randn(4, 10), torch.randn(4, 6)
    image_emb, text_emb = model(images, texts)
    loss = clip_loss(image_emb, text_emb, get_logit_scale(model))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(step, loss.item())


# In[4]:


# the temperature is a parameter of the model: it must be learned with the rest
g = model.logit_scale.grad
print("MATCH" if g is not None and g.abs() > 0 else "MISMATCH: logit_scale gets no gradient, the temperature never moves")
